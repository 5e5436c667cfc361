"""Cut an oversized text down to a token budget without breaking its structure.

A tool result of thousands of tokens has to fit a budget, but a model (and a person reading
the checkpoint) must still be able to parse it: JSON stays valid JSON, the head and the tail
are kept (errors tend to be at the end of a log, the request at its start), and a marker says
exactly how much was cut.
"""

from __future__ import annotations

import json
import math
from typing import Any

CHARS_PER_TOKEN = 4
"""The same ratio as `count_tokens_approximately`, so budgets and counts agree."""
_MIN_STRING = 24
_MIN_ITEMS = 2


def text_tokens(text: str) -> int:
    """Approximate tokens of a text, matching LangChain's approximate counter."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def truncate_text(text: str, max_tokens: int) -> str:
    """`text` if it fits; otherwise a shorter text of the same kind with a cut marker."""
    max_chars = max(max_tokens, 1) * CHARS_PER_TOKEN
    if len(text) <= max_chars:
        return text
    stripped = text.strip()
    if stripped[:1] in "[{":
        try:
            data = json.loads(stripped)
        except ValueError:
            pass
        else:
            return _truncate_json(data, max_chars)
    return _truncate_plain(text, max_chars)


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
