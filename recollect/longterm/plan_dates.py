"""The day a plan starts, read from its words ("next month", "in September", "ab Januar").

Small tables cover the languages `recollect.longterm.cues` knows (en, de, fr, es, pt, it, ja).
A plan starts at midnight, in the time zone of the moment it was said, of the first day its
words name after that moment: "next month" is the first of next month, "in September" the next
1 September, "next week" the next Monday, "tomorrow" the next day. Words that name no day give
None: such a plan is kept beside what holds, starting nothing.
"""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta

_MONTH_WORDS = (
    "january|januar|janvier|enero|janeiro|gennaio",
    "february|februar|février|fevrier|febrero|fevereiro|febbraio",
    "march|märz|maerz|mars|marzo|março",
    "april|avril|abril|aprile",
    "may|mai|mayo|maio|maggio",
    "june|juni|juin|junio|junho|giugno",
    "july|juli|juillet|julio|julho|luglio",
    "august|août|aout|agosto",
    "september|septembre|septiembre|setiembre|setembro|settembre",
    "october|oktober|octobre|octubre|outubro|ottobre",
    "november|novembre|noviembre|novembro",
    "december|dezember|décembre|decembre|diciembre|dezembro|dicembre",
)
MONTHS = {word: n for n, words in enumerate(_MONTH_WORDS, 1) for word in words.split("|")}
_MONTH = "(" + "|".join(sorted(MONTHS, key=len, reverse=True)) + ")"

ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
JA_DATE = re.compile(r"(?:(\d{4})年)?(\d{1,2})月(?:(\d{1,2})日)?")
DAY_MONTH = re.compile(
    rf"\b(\d{{1,2}})(?:st|nd|rd|th|er|º|\.)?\s+(?:de\s+)?{_MONTH}(?:\s+(?:de\s+)?(\d{{4}}))?\b"
)
MONTH_DAY = re.compile(rf"\b{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(\d{{4}}))?\b")
MONTH_YEAR = re.compile(
    rf"\b(?:in|from|starting|by|ab|im|en|em|a|da|dal|dès|desde|de)\s+(?:de\s+)?{_MONTH}"
    rf"(?:\s+(?:de\s+)?(\d{{4}}))?\b"
)
"""A month alone only after a word that makes it a time ("in May", "ab Januar", "en mars"):
"may" and "mars" are words of their own too."""


def _words(*patterns: str) -> re.Pattern[str]:
    return re.compile("|".join(patterns), re.IGNORECASE)


TOMORROW = _words(
    r"\btomorrow\b", r"\bmorgen\b", r"\bdemain\b", r"\bmañana\b", r"\bamanhã\b", r"\bdomani\b",
    r"明日",
)  # fmt: skip
NEXT_WEEK = _words(
    r"\bnext week\b", r"\bnächste woche\b", r"\bsemaine prochaine\b", r"\bpróxima semana\b",
    r"\bsemana que (viene|vem)\b", r"\bprossima settimana\b", r"\bsettimana prossima\b", r"来週",
)  # fmt: skip
NEXT_MONTH = _words(
    r"\bnext month\b", r"\bnächsten monat\b", r"\bmois prochain\b", r"\bpróximo mes\b",
    r"\bmes que viene\b", r"\bpróximo mês\b", r"\bmês que vem\b", r"\bprossimo mese\b",
    r"\bmese prossimo\b", r"来月",
)  # fmt: skip
NEXT_YEAR = _words(
    r"\bnext year\b", r"\bnächstes jahr\b", r"\bannée prochaine\b", r"\bpróximo año\b",
    r"\baño que viene\b", r"\bpróximo ano\b", r"\bano que vem\b", r"\bprossimo anno\b",
    r"\banno prossimo\b", r"来年",
)  # fmt: skip


def planned_start(text: str, said_at: datetime) -> datetime | None:
    """When the plan in `text`, said at `said_at`, starts; None when its words name no day
    after `said_at`."""
    lowered = text.lower()
    day = _named_day(lowered, said_at.date())
    if day is None:
        return None
    start = datetime.combine(day, time(), tzinfo=said_at.tzinfo)
    return start if start > said_at else None


def _named_day(text: str, today: date) -> date | None:
    if found := ISO_DATE.search(text):
        return _valid(int(found[1]), int(found[2]), int(found[3]))
    if (found := JA_DATE.search(text)) and 1 <= int(found[2]) <= 12:
        return _month_day(today, int(found[2]), int(found[3] or 1), found[1])
    if found := DAY_MONTH.search(text):
        return _month_day(today, MONTHS[found[2]], int(found[1]), found[3])
    if found := MONTH_DAY.search(text):
        return _month_day(today, MONTHS[found[1]], int(found[2]), found[3])
    if TOMORROW.search(text):
        return today + timedelta(days=1)
    if NEXT_WEEK.search(text):
        return today + timedelta(days=7 - today.weekday())
    if NEXT_MONTH.search(text):
        return date(today.year + today.month // 12, today.month % 12 + 1, 1)
    if NEXT_YEAR.search(text):
        return date(today.year + 1, 1, 1)
    if found := MONTH_YEAR.search(text):
        return _month_day(today, MONTHS[found[1]], 1, found[2])
    return None


def _month_day(today: date, month: int, day: int, year: str | None) -> date | None:
    """The given day in the given year, or the next one after `today` when no year is said."""
    if year is not None:
        return _valid(int(year), month, day)
    this_year = _valid(today.year, month, day)
    if this_year is not None and this_year > today:
        return this_year
    return _valid(today.year + 1, month, day)


def _valid(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None
