"""Text Postgres can store. A `text` or `jsonb` value may not hold NUL (U+0000), and no UTF-8
can carry an unpaired surrogate (U+D800 to U+DFFF alone), which Python strings (and JSON's
`\\ud800` escapes) can; either fails a statement, and one that fails on every retry (a message
queued again each turn) leaves its thread unusable. The edges refuse such text with one line
(`unstorable`); copies the engine makes for itself (the extraction queue, traces) replace the
characters instead (`storable`), so nothing a message holds can stop a turn."""

from __future__ import annotations

import re
from typing import Any

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def unstorable(text: str) -> str | None:
    """What in `text` the database cannot store, said for an error line; None when nothing."""
    found = _UNSTORABLE.search(text)
    if found is None:
        return None
    if found.group() == "\x00":
        return "a NUL character (\\u0000)"
    return f"an unpaired surrogate (\\u{ord(found.group()):04x})"


def storable(text: str) -> str:
    """`text` with each character the database cannot store replaced by U+FFFD."""
    return _UNSTORABLE.sub(REPLACEMENT, text)


MAX_JSON_DEPTH = 64
"""How deep a JSON document from outside may nest (LangGraph's own bodies, a run's input with
content blocks and tool calls, nest under 12)."""


def json_refusal(document: Any, max_depth: int = MAX_JSON_DEPTH) -> str | None:
    """The first place where `document` (parsed JSON) nests deeper than `max_depth` or holds
    text the database cannot store, said in one line; walked without recursion."""
    pending: list[tuple[Any, int, str]] = [(document, 1, "$")]
    while pending:
        value, depth, where = pending.pop()
        if isinstance(value, str):
            problem = unstorable(value)
            if problem:
                return f"{where} holds {problem}, which cannot be stored"
        elif isinstance(value, dict | list):
            if depth > max_depth:
                return f"the JSON is nested deeper than {max_depth} levels (at {where})"
            if isinstance(value, list):
                pending.extend((item, depth + 1, f"{where}[{i}]") for i, item in enumerate(value))
                continue
            for key, item in value.items():
                problem = unstorable(key) if isinstance(key, str) else None
                if problem:
                    return f"a key in {where} holds {problem}, which cannot be stored"
                pending.append((item, depth + 1, f"{where}.{str(key)[:40]}"))
    return None
