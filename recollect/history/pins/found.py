"""What a finder reports, and the shape every finder has."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

_SEPARATORS = re.compile(r"[\s#,.'\u2019:\-\u00a0\u2009\u202f]")


@dataclass(frozen=True)
class Found:
    """One value at its place in the text, as written."""

    kind: str
    value: str
    start: int
    end: int


class Finder(Protocol):
    """A family of values; `in_tool_results` says whether a log or listing is read for it."""

    in_tool_results: bool

    def find(self, text: str) -> Iterator[Found]: ...


def compact(value: str) -> str:
    """A value without case, spaces, `#` and separators: how a retraction names a pin
    ("not #4417" takes back order 4417, "not €1.249,50" takes back €1,249.50)."""
    return _SEPARATORS.sub("", value).lower()


def shape(value: str) -> str:
    """Letters as A and digits as 9: a correction's new value has its old value's shape."""
    return re.sub(r"[^\W\d_]", "A", re.sub(r"\d", "9", compact(value)))


def lowered(text: str) -> str:
    """The text in lower case with every character in its place, for word tables matched
    without IGNORECASE (which makes a long alternation many times slower)."""
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(ch if len(ch.lower()) != 1 else ch.lower() for ch in text)
