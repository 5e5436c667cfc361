"""Split a task into subtasks when no model plans it (the offline model, or an empty plan)."""

from __future__ import annotations

import re

_SEPARATORS = re.compile(r"\s*(?:\n+|;|(?<=[.?!])\s+)\s*")
_LEAD = re.compile(r"^(?:[-*•]|\d+[.)])\s*")


def split_task(task: str, limit: int) -> list[str]:
    """One subtask per line, bullet, `;` or sentence, at most `limit`; the task itself when it
    has no parts. Empty parts are dropped and repeats kept once."""
    if limit < 1:
        raise ValueError(f"the number of workers must be at least 1, got {limit}")
    parts = [_LEAD.sub("", p).strip() for p in _SEPARATORS.split(task.strip())]
    unique = list(dict.fromkeys(p for p in parts if p))
    return unique[:limit] or ([task.strip()] if task.strip() else [])
