"""National ids the phone detector would otherwise take: Japan's My Number, Sweden's
personnummer, Korea's resident registration number (RRN), Norway's fødselsnummer and
Denmark's CPR number.

Each is labelled as what it is. Four of them begin with the holder's birth date, so the date
must be a real one; the check digit must hold where the scheme has one (the CPR dropped its
check in 2007, so its birth-date-and-serial shape with a dash, or the word CPR, decides).
"""

# ruff: noqa: RUF001  (dashes of several kinds are what these rules read)
from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date

from recollect.gate.checksums import luhn_valid
from recollect.gate.pii_context import named_reference, words_before

_SEP = r"[\s\-–./]?"
MY_NUMBER = re.compile(rf"(?<![\d\w])\d{{4}}{_SEP}\d{{4}}{_SEP}\d{{4}}(?![\d\w])")
RRN = re.compile(r"(?<![\d\w])\d{6}\s?[-–]\s?\d{7}(?![\d\w])")
SIX_FOUR = re.compile(r"(?<![\d\w])(?:\d{2})?\d{6}\s?[-–+]\s?\d{4}(?![\d\w])")
FODSELSNUMMER = re.compile(r"(?<![\d\w])\d{6}\s?\d{5}(?![\d\w])")

_CPR_NAMED = re.compile(r"(?i)\bcpr\b")
_PERSONNUMMER_NAMED = re.compile(r"(?i)person(?:nummer|nr)|samordningsnummer")
_MY_NUMBER_NAMED = re.compile(r"(?i)my\s*number|マイナンバー|個人番号|kojin\s*bang[oō]")


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)


def _real_date(year: int, month: int, day: int) -> bool:
    try:
        date(year, month, day)
    except ValueError:
        return False
    return True


def my_number_valid(digits: str) -> bool:
    """Twelve digits; the last is 11 minus (weighted sum mod 11), or 0 when that is 10 or 11."""
    if len(digits) != 12:
        return False
    body = [int(c) for c in reversed(digits[:11])]
    total = sum(p * (n + 1 if n <= 6 else n - 5) for n, p in enumerate(body, start=1))
    remainder = total % 11
    return int(digits[11]) == (0 if remainder <= 1 else 11 - remainder)


def rrn_valid(digits: str) -> bool:
    """YYMMDD, a sex/century digit, and (before 2020) a weighted mod-11 check digit."""
    if len(digits) != 13 or digits[6] not in "12345678":
        return False
    century = {"1": 1900, "2": 1900, "3": 2000, "4": 2000, "5": 1900, "6": 1900}
    year = century.get(digits[6], 2000) + int(digits[:2])
    if not _real_date(year, int(digits[2:4]), int(digits[4:6])):
        return False
    weights = (2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5)
    check = (11 - sum(int(d) * w for d, w in zip(digits, weights, strict=False)) % 11) % 10
    return check == int(digits[12]) or year >= 2020


def personnummer_valid(digits: str) -> bool:
    """YYMMDD (day + 60 for a coordination number) and four digits, Luhn over the ten."""
    ten = digits[-10:]
    day = int(ten[4:6]) % 60 or int(ten[4:6])
    return _real_date(2000, int(ten[2:4]), day) and luhn_valid(ten)


def fodselsnummer_valid(digits: str) -> bool:
    """DDMMYY, three serial digits and two mod-11 check digits (day + 40 for a D-number)."""
    if len(digits) != 11:
        return False
    values = [int(c) for c in digits]
    checks = (((3, 7, 6, 1, 8, 9, 4, 5, 2), 9), ((5, 4, 3, 2, 7, 6, 5, 4, 3, 2), 10))
    for weights, position in checks:
        check = 11 - sum(v * w for v, w in zip(values, weights, strict=False)) % 11
        if (0 if check == 11 else check) != values[position]:
            return False
    day = int(digits[:2]) % 40 or int(digits[:2])
    return _real_date(2000, int(digits[2:4]), day)


def cpr_shape(digits: str) -> bool:
    """DDMMYY and four serial digits: a real date is all the number still promises."""
    return len(digits) == 10 and _real_date(2000, int(digits[2:4]), int(digits[:2]))


def _six_four(match: re.Match[str]) -> str | None:
    text, start = match.string, match.start()
    digits = _digits(match.group(0))
    if named_reference(text, start):
        return None
    if words_before(text, start, _CPR_NAMED) and cpr_shape(digits):
        return "cpr"
    if personnummer_valid(digits):
        return "personnummer"
    return "cpr" if len(digits) == 10 and cpr_shape(digits) else None


def _checked(
    kind: str, valid: Callable[[str], bool], named: re.Pattern[str] | None = None
) -> Callable[[re.Match[str]], str | None]:
    def classify(match: re.Match[str]) -> str | None:
        text, start = match.string, match.start()
        if named_reference(text, start) or not valid(_digits(match.group(0))):
            return None
        return kind if named is None or words_before(text, start, named) else None

    return classify


DETECTORS: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str | None]], ...] = (
    (RRN, _checked("rrn", rrn_valid)),
    (SIX_FOUR, _six_four),
    (FODSELSNUMMER, _checked("fodselsnummer", fodselsnummer_valid)),
    (MY_NUMBER, _checked("my_number", my_number_valid, _MY_NUMBER_NAMED)),
)
"""Run after the checksummed ids of `national_ids` and before phones."""

KINDS = frozenset({"my_number", "personnummer", "rrn", "fodselsnummer", "cpr"})
