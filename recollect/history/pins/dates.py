"""Calendar dates as written: `2025-03-14`, `14.03.2025`, `03/14/2025`, `2025年3月14日`,
`2025년 3월 14일`, `March 3rd, 2026`, `3. März 2025`, `5 de marzo de 2025`, `1er mai 2025`.

Month names come from Babel's CLDR data (wide, abbreviated, and the genitive forms Polish,
Czech and Russian write after a day), for the languages below; a name is taken only beside a
day number, so "May" or "mar" alone stay words. A bare year, a time or a version is no date.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache

from babel.dates import get_month_names

from recollect.history.pins.found import Found

LANGUAGES = ("en", "de", "fr", "es", "pt", "it", "nl", "sv", "da", "nb", "pl", "cs", "ru", "tr")
"""Languages whose month names are read."""
_ALSO_WORDS = frozenset(
    {"may", "out", "set", "pro", "mag", "gen", "ago", "des", "dub", "led", "sie"}
)
"""Abbreviations that are common words elsewhere ("3 out of 5", "iPhone 15 Pro", "10 may")."""

_NUMERIC = (
    r"(?:\d{4}-\d{1,2}-\d{1,2}|\d{4}/\d{1,2}/\d{1,2}"
    r"|\d{1,2}\.\d{1,2}\.\d{4}|\d{1,2}/\d{1,2}/(?:\d{4}|\d{2})|\d{1,2}-\d{1,2}-\d{4})(?![\d.\-/]\d)"
)
_EAST_ASIAN = (
    r"(?:\d{4}\s?年\s?)?\d{1,2}\s?月\s?\d{1,2}\s?[日号號]"
    r"|(?:\d{4}년\s?)?\d{1,2}월\s?\d{1,2}일"
)
_DIGITS = re.compile(r"\d+")
_ORDINAL = r"(?:st|nd|rd|th|er|re|e|º|ª|\.)?"


@cache
def month_names() -> tuple[str, ...]:
    """Every wide and abbreviated month name of `LANGUAGES`, and each name capitalised."""
    names: set[str] = set()
    for language in LANGUAGES:
        for width in ("wide", "abbreviated"):
            for context in ("format", "stand-alone"):
                for name in get_month_names(width, context, language).values():
                    name = name.rstrip(".")
                    if len(name) >= 3 and name not in _ALSO_WORDS:
                        names.update((name, name[:1].upper() + name[1:]))
                        if width == "wide" and len(name) > 4:
                            names.add(name[:4].capitalize())  # Sept, Janv
    return tuple(sorted(names, key=len, reverse=True))


@cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Dates that start with a digit, and dates that start with a month's name (each found
    apart: one alternation of names tried at every position is many times slower)."""
    month = "(?:" + "|".join(re.escape(name) for name in month_names()) + r")\.?"
    year = r"(?:,?\s(?:de\s|del\s)?\d{4}(?!\d))"
    day = rf"(?:[12]\d|3[01]|0?[1-9]){_ORDINAL}"
    day_of = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)\sof\s"  # the 3rd of March
    digit_first = re.compile(
        rf"{_NUMERIC}|{_EAST_ASIAN}|(?:{day}\s(?:de\s)?|{day_of}){month}(?![^\W\d_]){year}?"
        rf"|(?:[12]\d|3[01]|0?[1-9])-{month}-\d{{4}}(?!\d)"  # 14-Mar-2025
    )
    month_first = re.compile(rf"(?:{month})\s{day}(?![\d:])(?:{year})?")
    return digit_first, month_first


class Dates:
    """Dates the user writes; not read in tool results, where they are timestamps."""

    in_tool_results = False

    def find(self, text: str) -> Iterator[Found]:
        digit_first, month_first = _patterns()
        after = 0
        for digits in _DIGITS.finditer(text):
            start = digits.start()
            if start < after or (start and text[start - 1] in ".-/"):
                continue
            if match := digit_first.match(text, start):
                after = match.end()
                yield Found("date", match.group(0), start, after)
        for match in month_first.finditer(text):
            start = match.start()
            if not (start and (text[start - 1].isalpha() or text[start - 1].isdigit())):
                yield Found("date", match.group(0), *match.span())
