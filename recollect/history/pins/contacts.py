"""Emails and phone numbers; a phone is what `phonenumbers`' metadata (and the words before)
call one, so dates, versions and times stay as they are."""

from __future__ import annotations

from collections.abc import Iterator

from recollect.extraction.phones import CANDIDATE, is_phone
from recollect.extraction.pii_patterns import EMAIL
from recollect.history.pins.found import Found


class Emails:
    """Addresses as written, Unicode local parts and domains included."""

    in_tool_results = True

    def find(self, text: str) -> Iterator[Found]:
        for match in EMAIL.finditer(text):
            yield Found("email", match.group(0), *match.span())


class Phones:
    """International and national numbers in any grouping."""

    in_tool_results = True

    def find(self, text: str) -> Iterator[Found]:
        for match in CANDIDATE.finditer(text):
            if is_phone(match):
                yield Found("phone", match.group(0).strip(), *match.span())
