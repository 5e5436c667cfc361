"""Values that name nobody alone but a person together: a postcode and a date of birth.

A UK postcode narrows a person to about fifteen households; with a birth date it is nearly
always one person, and a birth date beside a street address is the same. So a postcode is
taken when a birth date or an address is in the same fact, and a birth date when a postcode
or an address is. "Born in 1985" or "lives near SW1A" alone stay.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

UK_POSTCODE = re.compile(
    r"(?<![\w])(?:GIR\s?0AA|[A-PR-UWYZ][A-HK-Y]?\d[A-Z\d]?\s?\d[ABD-HJLNP-UW-Z]{2})(?![\w])",
    re.IGNORECASE,
)
_MONTHS = (
    r"jan\w*|feb\w*|mar\w*|apr\w*|may|jun\w*|jul\w*|aug\w*|sep\w*|oct\w*|nov\w*|dec\w*|"
    r"januar|februar|märz|mai|juni|juli|oktober|dezember|janvier|février|mars|avril|juin|"
    r"juillet|août|septembre|octobre|novembre|décembre|enero|febrero|marzo|abril|mayo|junio|"
    r"julio|agosto|septiembre|octubre|noviembre|diciembre|janeiro|fevereiro|março|maio|junho|"
    r"julho|setembro|outubro|dezembro|gennaio|febbraio|aprile|maggio|giugno|luglio|settembre|"
    r"ottobre|dicembre"
)
_DATE = (
    r"(?:\d{1,2}[./\-]\d{1,2}[./\-](?:19|20)?\d{2}|(?:19|20)\d{2}-\d{1,2}-\d{1,2}|"
    rf"\d{{1,2}}(?:st|nd|rd|th|\.|º|er)?\s+(?:de\s+|of\s+)?(?:{_MONTHS})\.?,?\s+(?:de\s+)?"
    rf"(?:19|20)\d{{2}}|(?:{_MONTHS})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+(?:19|20)\d{{2}})"
)
BIRTH_DATE = re.compile(
    r"(?i)(?:\bborn(?:\s+on)?|\bd\.?o\.?b\.?|date\s+of\s+birth|birthday(?:\s+is)?|"
    r"geboren(?:\s+am|\s+op)?|geburtsdatum|né(?:e)?\s+le|date\s+de\s+naissance|"
    r"nacid[oa]\s+el|fecha\s+de\s+nacimiento|nat[oa]\s+il|data\s+di\s+nascita|"
    r"nascid[oa]\s+(?:em|a)|data\s+de\s+nascimento|geboortedatum)\W{0,3}\s*"
    rf"(?P<date>{_DATE})"
)
_ADDRESS_PLACEHOLDER = "[ADDRESS]"


def find(text: str) -> Iterable[tuple[int, int, str]]:
    """Postcode and birth-date spans, only when the fact holds two of postcode, birth date
    and an already-redacted address."""
    postcodes = [(m.start(), m.end(), "postcode") for m in UK_POSTCODE.finditer(text)]
    births = [(m.start("date"), m.end("date"), "birth_date") for m in BIRTH_DATE.finditer(text)]
    address = _ADDRESS_PLACEHOLDER in text
    spans: list[tuple[int, int, str]] = []
    if postcodes and (births or address):
        spans += postcodes
    if births and (postcodes or address):
        spans += births
    return sorted(spans)
