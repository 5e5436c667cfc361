"""Cut a message's content, string or block list, and keep what the cut left out.

Block lists (multimodal input, MCP and Anthropic-style tool results) are cut like strings:
text blocks share the budget (largest cut first), and non-text blocks beyond
`MAX_NON_TEXT_BLOCKS`, or beyond what the budget can pay for, become a one-line text marker.
The text a cut removes is returned, so it can travel on to the summary fold and to
extraction as excerpts instead of leaving state unread.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from recollect.history.tokens import NON_TEXT_BLOCK_TOKENS, block_text, is_text_block, text_tokens
from recollect.history.truncation import cut_middle, truncate_text

MAX_NON_TEXT_BLOCKS = 4
"""Images or files one message may keep in a prompt; the rest are named, not sent."""
EXCERPT_KEY = "excerpt_of"
"""`additional_kwargs` key marking an excerpt (a cut middle) with its source message id."""
EXCERPT_TOKENS = 500
"""Excerpts are split to this size, so the fold reads every part of a cut middle."""
_MIN_TEXT_TOKENS = 16


def cut_content(content: str | list[Any], max_tokens: int) -> tuple[str | list[Any], str]:
    """The content within `max_tokens` (same kind: string or blocks) and the text cut out."""
    if isinstance(content, str):
        return cut_middle(content, max_tokens)
    blocks = list(content)
    others = [i for i, b in enumerate(blocks) if not is_text_block(b)]
    affordable = max(max_tokens // 2, 0) // NON_TEXT_BLOCK_TOKENS
    keep_others = set(others[: min(MAX_NON_TEXT_BLOCKS, affordable)])
    dropped_others = [i for i in others if i not in keep_others]
    for i in dropped_others:
        kind = blocks[i].get("type", "block") if isinstance(blocks[i], dict) else "block"
        blocks[i] = {"type": "text", "text": f"[{kind} omitted]"}
    texts = [i for i, b in enumerate(blocks) if is_text_block(b)]
    room = max(max_tokens - NON_TEXT_BLOCK_TOKENS * len(keep_others), _MIN_TEXT_TOKENS)
    sizes = {i: text_tokens(block_text(blocks[i])) for i in texts}
    cap = _water_level(list(sizes.values()), room)
    middles: list[str] = []
    for i, size in sizes.items():
        if size <= cap:
            continue
        cut, middle = cut_middle(block_text(blocks[i]), max(cap, _MIN_TEXT_TOKENS))
        blocks[i] = cut if isinstance(blocks[i], str) else {**blocks[i], "text": cut}
        middles.append(middle)
    return blocks, "\n".join(m for m in middles if m)


def _water_level(sizes: list[int], room: int) -> int:
    """The largest per-item cap under which the items fit `room`."""
    if sum(sizes) <= room:
        return max(sizes, default=0)
    low, high = _MIN_TEXT_TOKENS, max(sizes, default=_MIN_TEXT_TOKENS)
    while low < high:
        cap = (low + high + 1) // 2
        if sum(min(size, cap) for size in sizes) <= room:
            low = cap
        else:
            high = cap - 1
    return low


def excerpts_of(source: BaseMessage, middle: str) -> list[BaseMessage]:
    """The cut middle of `source` as excerpt messages of its kind, `EXCERPT_TOKENS` each."""
    if not middle.strip():
        return []
    if source.type == "tool":
        # Exact values in tool output are pinned and the fold keeps only a tool's conclusion;
        # one excerpt with the middle's own head and tail is what the fold can use.
        middle = truncate_text(middle, EXCERPT_TOKENS)
    pieces: list[str] = []
    rest = middle
    while rest:
        ratio = max(len(rest) / max(text_tokens(rest), 1), 1.0)
        size = max(int(EXCERPT_TOKENS * ratio), 1)
        if size < len(rest):
            space = rest.rfind(" ", size // 2, size)
            size = space + 1 if space > 0 else size
        pieces.append(rest[:size])
        rest = rest[size:]
    base = source.id or "message"
    extra: dict[str, Any] = {"tool_calls": []} if isinstance(source, AIMessage) else {}
    return [
        source.model_copy(
            update={
                "content": piece,
                "id": f"{base}:cut:{n}",
                "additional_kwargs": {**source.additional_kwargs, EXCERPT_KEY: base},
                **extra,
            }
        )
        for n, piece in enumerate(pieces, start=1)
    ]


def is_excerpt(message: BaseMessage) -> bool:
    """Whether `message` is a cut middle waiting for the fold (never shown in a prompt)."""
    return bool(message.additional_kwargs.get(EXCERPT_KEY))
