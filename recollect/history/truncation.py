"""Cut an oversized text down to a token budget without breaking its structure.

A tool result of thousands of tokens has to fit a budget, but a model (and a person reading
the checkpoint) must still be able to parse it: JSON stays valid JSON, the head and the tail
are kept (errors tend to be at the end of a log, the request at its start), and a marker says
exactly how much was cut.
"""

from __future__ import annotations

import json
from typing import Any

from recollect.history.tokens import text_tokens

_MIN_STRING = 24
_MIN_ITEMS = 2
_MIN_CHARS = 16


def truncate_text(text: str, max_tokens: int) -> str:
    """`text` if it fits; otherwise a shorter text of the same kind with a cut marker.

    The character budget follows the text's own characters-per-token rate (a Chinese text
    gets about a quarter of the characters an English one does), and shrinks until it fits.
    """
    max_tokens = max(max_tokens, 1)
    tokens = text_tokens(text)
    if tokens <= max_tokens:
        return text
    max_chars = max(int(max_tokens * len(text) / tokens), _MIN_CHARS)
    data = _json_of(text)
    while True:
        cut = (
            _truncate_json(data, max_chars)
            if data is not None
            else _truncate_plain(text, max_chars)
        )
        if text_tokens(cut) <= max_tokens or max_chars <= _MIN_CHARS:
            return cut
        max_chars = max(max_chars * 4 // 5, _MIN_CHARS)


def cut_middle(text: str, max_tokens: int) -> tuple[str, str]:
    """`truncate_text` plus the plain text it left out (head and tail kept, middle returned),
    so whoever cuts can hand the middle on to the summary and to extraction."""
    cut = truncate_text(text, max_tokens)
    if cut == text:
        return text, ""
    if _json_of(text) is not None:
        return cut, text  # a shrunk document keeps no contiguous middle; hand on the whole
    marker = cut.find("\n[… ")
    end = cut.find(" cut …]\n", marker)
    if marker < 0 or end < 0:
        return cut, text
    head = cut[:marker]
    tail = cut[end + len(" cut …]\n") :]
    return cut, text[len(head) : len(text) - len(tail)]


def _json_of(text: str) -> Any:
    stripped = text.strip()
    if stripped[:1] in "[{":
        try:
            return json.loads(stripped)
        except ValueError:
            return None
    return None


def _truncate_plain(text: str, max_chars: int) -> str:
    marker_budget = 64
    keep = max(max_chars - marker_budget, 2)
    head, tail = text[: keep * 3 // 5], text[len(text) - keep * 2 // 5 :]
    cut = len(text) - len(head) - len(tail)
    cut_lines = text[len(head) : len(text) - len(tail)].count("\n")
    marker = f"\n[… {cut:,} characters ({cut_lines:,} lines) cut …]\n"
    return head + marker + tail


def _truncate_json(data: Any, max_chars: int) -> str:
    """Shrink long strings and long lists (head and tail kept) until the JSON fits."""
    string_limit, item_limit = max_chars, 64
    while True:
        shrunk = _shrink(data, string_limit, item_limit)
        rendered = json.dumps(shrunk, ensure_ascii=False)
        if len(rendered) <= max_chars:
            return rendered
        if string_limit <= _MIN_STRING and item_limit <= _MIN_ITEMS:
            break
        string_limit = max(_MIN_STRING, string_limit // 2)
        item_limit = max(_MIN_ITEMS, item_limit // 2)
    # Even minimal items are too many: keep a valid envelope with the ends of the document.
    whole = json.dumps(data, ensure_ascii=False)
    keep = max(max_chars - 120, 16) // 2
    while True:
        envelope = {
            "truncated": f"{len(whole) - 2 * keep:,} characters cut",
            "head": whole[:keep],
            "tail": whole[-keep:],
        }
        rendered = json.dumps(envelope, ensure_ascii=False)
        if len(rendered) <= max_chars or keep <= 8:
            return rendered
        keep = keep * 3 // 4  # escaping made it longer than its budget


def _shrink(value: Any, string_limit: int, item_limit: int) -> Any:
    if isinstance(value, str) and len(value) > string_limit:
        head = value[: string_limit * 3 // 5]
        tail = value[len(value) - string_limit * 2 // 5 :]
        return f"{head}[… {len(value) - len(head) - len(tail):,} characters cut …]{tail}"
    if isinstance(value, list):
        items = value
        if len(items) > item_limit:
            head_n = max(item_limit - item_limit // 2, 1)
            tail_n = item_limit // 2
            marker = f"[… {len(items) - head_n - tail_n:,} items cut …]"
            items = [*items[:head_n], marker, *items[len(items) - tail_n :]]
            return [
                item if item is marker else _shrink(item, string_limit, item_limit)
                for item in items
            ]
        return [_shrink(item, string_limit, item_limit) for item in items]
    if isinstance(value, dict):
        keys = list(value)
        if len(keys) > item_limit:
            head_n = max(item_limit - item_limit // 2, 1)
            tail_n = item_limit // 2
            kept = keys[:head_n] + keys[len(keys) - tail_n :]
            shrunk = {k: _shrink(value[k], string_limit, item_limit) for k in kept}
            shrunk["…"] = f"[… {len(keys) - len(kept):,} keys cut …]"
            return shrunk
        return {k: _shrink(v, string_limit, item_limit) for k, v in value.items()}
    return value
