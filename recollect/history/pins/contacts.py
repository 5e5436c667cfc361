"""Emails and phone numbers; a phone is what `phonenumbers`' metadata (and the words before)
call one, so dates, versions and times stay as they are."""

from __future__ import annotations

import re
from collections.abc import Iterator

from recollect.gate.phones import is_phone
from recollect.gate.pii_patterns import EMAIL
from recollect.history.pins.found import Found


class Emails:
    """Addresses as written, Unicode local parts and domains included."""

    in_tool_results = True

    def find(self, text: str) -> Iterator[Found]:
        for match in EMAIL.finditer(text):
            yield Found("email", match.group(0), *match.span())


_CANDIDATE = re.compile(
    r"(?<![A-Za-z0-9_+])(?:(?:\+|00)\s?)?\(?\d[\d\s\-./()\u2013\u2014]{4,22}\d(?![A-Za-z0-9_])"
    r"|(?<![A-Za-z0-9_+])\d{7,15}(?![A-Za-z0-9_])"
)
"""The redaction's candidate digit runs (`phones.CANDIDATE`), bounded by Latin letters and
digits only, so a number written against CJK text ("携帯は090-1234-5678です") is read too."""


class Phones:
    """International and national numbers in any grouping."""

    in_tool_results = True

    def find(self, text: str) -> Iterator[Found]:
        for match in _CANDIDATE.finditer(text):
            if is_phone(match):
                yield Found("phone", match.group(0).strip(), *match.span())
