"""Phone numbers in any country's format, judged by `phonenumbers` (Google's libphonenumber
metadata, shipped inside the wheel) rather than one hand-written shape.

A digit run is a phone number when it is an international number the metadata calls
possible, a North American number of the usual shape (with or without the leading 1), a
national number valid in one of the common regions, or any 7-15 digits the words before call a
phone. Dates, times, versions and named references stay as they are.
"""

# ruff: noqa: RUF001  (look-alike characters are what these rules are about)
from __future__ import annotations

import re

import phonenumbers

from recollect.gate.phone_words import PHONE_WORDS as _NAMED
from recollect.gate.pii_context import after_version, named_reference, words_before

CANDIDATE = re.compile(
    r"(?<![\w+])(?:(?:\+|00)\s?)?\(?\d[\d\s\-./()–—]{4,22}\d(?![\w])|(?<![\w+])\d{7,15}(?![\w])"
)
_DATE = re.compile(
    r"^(?:\d{4}[-./]\d{1,2}[-./]\d{1,2}|\d{1,2}[-./]\d{1,2}[-./]\d{2,4}|\d{1,2}:\d{2}(?::\d{2})?)$"
)
_IP = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}$")
_NANP = re.compile(r"^1?[2-9]\d{2}[2-9]\d{6}$")
_REGIONS = ("GB", "DE", "FR", "ES", "IT", "NL", "BE", "AT", "CH", "PT", "PL", "SE", "IE", "AU",
            "IN", "BR", "MX", "JP", "CN", "KR", "RU", "TR", "ZA", "NG")  # fmt: skip


def _valid_somewhere(number: str) -> bool:
    for region in _REGIONS:
        try:
            parsed = phonenumbers.parse(number, region)
        except phonenumbers.NumberParseException:
            continue
        if phonenumbers.is_valid_number(parsed):
            return True
    return False


def is_phone(match: re.Match[str]) -> bool:
    """The decision for one candidate run (see the module docstring)."""
    raw = match.group(0).strip()
    text, start = match.string, match.start()
    digits = re.sub(r"\D", "", raw)
    if not 7 <= len(digits) <= 15 or _DATE.match(raw) or _IP.match(raw):
        return False
    if after_version(text, start) or named_reference(text, start):
        return False
    if raw.startswith(("+", "00")):
        try:
            parsed = phonenumbers.parse("+" + digits.removeprefix("00") if raw[0] == "0" else raw)
        except phonenumbers.NumberParseException:
            return False
        return phonenumbers.is_possible_number(parsed)
    if raw.count(".") > 2 and any(len(group) != 2 for group in raw.split(".")[1:]):
        return False  # a version, not 01.42.68.53.00
    if words_before(text, start, _NAMED, 30) and len(digits) >= 8:
        return True
    if _NANP.match(digits) and (len(digits) == 10 or digits[0] == "1"):
        return True
    trunk_or_grouped = raw.startswith("0") or bool(re.search(r"\d{3}\D+\d{3}", raw))
    return trunk_or_grouped and _valid_somewhere(raw)


def phone(match: re.Match[str]) -> str | None:
    return "phone" if is_phone(match) else None
