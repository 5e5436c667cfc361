"""The verbatim window: which messages a bounded history keeps, and how an oversized one fits.

`trim_messages` picks the newest messages within a token budget, but it can keep a
`ToolMessage` whose `AIMessage` it dropped, or an `AIMessage` whose tool results it dropped
(langchain-core issue #33245); providers reject both. `kept_messages` repairs that after it and
guarantees the invariants the property tests check: the leading system message is never
dropped, tool calls and their results are kept or dropped together, the kept tail starts on a
human message, and the budget holds unless the newest turn alone exceeds it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    ToolMessage,
    trim_messages,
)

from recollect.history.content import EXCERPT_KEY, cut_content, excerpts_of
from recollect.history.tokens import count_messages, message_tokens

__all__ = [
    "MIN_MESSAGE_TOKENS",
    "Window",
    "close_dangling_calls",
    "fit_window",
    "kept_messages",
    "message_tokens",
    "repair_tool_pairs",
    "valid_history",
]

MIN_MESSAGE_TOKENS = 32
"""No message is cut below this: a marker and a little of each end must fit."""
CANCELLED_TOOL_CALL = (
    "Error: this tool call has no result (the tool failed, or the run stopped before the "
    "tool returned); check before relying on what it would have done."
)
"""The result that closes a tool call left without one, so the thread stays valid."""


def kept_messages(messages: Sequence[BaseMessage], max_tokens: int) -> list[BaseMessage]:
    """The system message (if first) plus the newest whole turns within `max_tokens`.

    When even the newest turn (from the last human message on) exceeds the budget it is kept
    whole anyway; `fit_window` then truncates its largest messages.
    """
    if not messages:
        return []
    system = [messages[0]] if messages[0].type == "system" else []
    body = list(messages[len(system) :])
    budget = max(max_tokens - message_tokens(system), 0)
    kept: list[BaseMessage] = trim_messages(
        body,
        max_tokens=budget,
        token_counter=count_messages,
        strategy="last",
        start_on="human",
        allow_partial=False,
    )
    kept = repair_tool_pairs(kept)
    if not kept:
        last_human = max(
            (i for i, m in enumerate(body) if isinstance(m, HumanMessage)), default=None
        )
        if last_human is not None:
            kept = repair_tool_pairs(body[last_human:])
    return system + kept


def repair_tool_pairs(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """Drop orphaned tool results and tool calls missing a result; start on a human message."""
    kept = list(messages)
    while True:
        call_ids = {call["id"] for m in kept if isinstance(m, AIMessage) for call in m.tool_calls}
        result_ids = {m.tool_call_id for m in kept if isinstance(m, ToolMessage)}
        repaired = [
            m
            for m in kept
            if not (isinstance(m, ToolMessage) and m.tool_call_id not in call_ids)
            and not (
                isinstance(m, AIMessage)
                and m.tool_calls
                and any(call["id"] not in result_ids for call in m.tool_calls)
            )
        ]
        start = next((i for i, m in enumerate(repaired) if isinstance(m, HumanMessage)), None)
        repaired = [] if start is None else repaired[start:]
        if len(repaired) == len(kept):
            return repaired
        kept = repaired


def close_dangling_calls(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """Each tool call without a result gets a `CANCELLED_TOOL_CALL` result right after its
    `AIMessage` (after the results that did arrive); a result without its call is dropped.

    A tool that raised, or a run stopped between the model and the tools, leaves such a call;
    providers reject every later request that contains it, so the thread would be dead.
    """
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    called = {call["id"] for m in messages if isinstance(m, AIMessage) for call in m.tool_calls}
    out: list[BaseMessage] = []
    pending: list[ToolMessage] = []
    for message in messages:
        if isinstance(message, ToolMessage):
            if message.tool_call_id in called:
                out.append(message)
            continue
        out.extend(pending)
        pending = []
        out.append(message)
        if isinstance(message, AIMessage):
            pending = [
                ToolMessage(
                    content=CANCELLED_TOOL_CALL,
                    tool_call_id=call["id"],
                    name=call["name"],
                    status="error",
                    id=f"{message.id}:{call['id']}:cancelled" if message.id else None,
                )
                for call in message.tool_calls
                if call["id"] not in answered
            ]
    out.extend(pending)
    return out


def valid_history(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """What a provider accepts: results directly after their call, no orphan, excerpts (cut
    middles waiting for the fold) left out, a leading system message kept, human first."""
    shown = [m for m in messages if not m.additional_kwargs.get(EXCERPT_KEY)]
    system = [shown[0]] if shown and shown[0].type == "system" else []
    body = close_dangling_calls(shown[len(system) :])
    ordered: list[BaseMessage] = []
    results = {m.tool_call_id: m for m in body if isinstance(m, ToolMessage)}
    for message in body:
        if isinstance(message, ToolMessage):
            continue
        ordered.append(message)
        if isinstance(message, AIMessage):
            ordered += [results.pop(c["id"]) for c in message.tool_calls if c["id"] in results]
    return system + repair_tool_pairs(ordered)


@dataclass(frozen=True)
class Window:
    """The outcome of fitting a history to a budget."""

    kept: list[BaseMessage]
    """Messages to keep, oversized ones already truncated (same ids)."""
    dropped: list[BaseMessage]
    """Messages that leave the window, oldest first (oversized ones truncated)."""
    truncated_ids: list[str]
    """Ids of the messages whose content was cut."""
    excerpts: list[BaseMessage]
    """What the cuts left out, as excerpt messages for the fold and for extraction."""


def fit_window(
    messages: Sequence[BaseMessage], max_tokens: int, keep_tokens: int | None = None
) -> Window:
    """Choose the window (the newest whole turns within `keep_tokens`, by default the budget),
    then cut oversized messages so nothing kept exceeds the budget."""
    kept = kept_messages(messages, max_tokens if keep_tokens is None else keep_tokens)
    kept_ids = {id(m) for m in kept}
    dropped = [m for m in messages if id(m) not in kept_ids]
    cuts: list[tuple[BaseMessage, str]] = []
    fitted = _fit(kept, max_tokens, cuts)
    # A message leaving the window alone larger than the whole budget is cut too, so that
    # nothing in the checkpoint is bigger than the history budget while it waits to be folded.
    dropped = [_cut(m, max_tokens, cuts) for m in dropped]
    excerpts = [e for source, middle in cuts for e in excerpts_of(source, middle)]
    return Window(
        kept=fitted,
        dropped=dropped,
        truncated_ids=[m.id for m, _ in cuts if m.id],
        excerpts=excerpts,
    )


def _fit(
    kept: list[BaseMessage], max_tokens: int, cuts: list[tuple[BaseMessage, str]]
) -> list[BaseMessage]:
    """Water-fill: find the largest per-message cap under which the window fits, cut above it."""
    total = message_tokens(kept)
    if total <= max_tokens:
        return kept
    system = [m for m in kept[:1] if m.type == "system"]
    body = kept[len(system) :]
    room = max(max_tokens - message_tokens(system), 0)
    sizes = [message_tokens([m]) for m in body]
    low, high = MIN_MESSAGE_TOKENS, max(sizes, default=MIN_MESSAGE_TOKENS)
    while low < high:
        cap = (low + high + 1) // 2
        if sum(min(size, cap) for size in sizes) <= room:
            low = cap
        else:
            high = cap - 1
    return system + [
        _cut(m, low, cuts) if size > low else m for m, size in zip(body, sizes, strict=True)
    ]


def _cut(message: BaseMessage, max_tokens: int, cuts: list[tuple[BaseMessage, str]]) -> BaseMessage:
    """The message with its content (a string or blocks) cut to fit `max_tokens`, id unchanged;
    the cut is recorded with the text it left out."""
    if message_tokens([message]) <= max_tokens:
        return message
    fixed = message_tokens([message.model_copy(update={"content": ""})])
    target = max(max_tokens - fixed, MIN_MESSAGE_TOKENS)
    content, middle = cut_content(message.content, target)
    if content == message.content:
        return message
    cuts.append((message, middle))
    return message.model_copy(update={"content": content})
