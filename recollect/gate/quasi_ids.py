"""Values that name nobody alone but a person together: a postcode and a date of birth.

A UK postcode (or any postcode its label names) narrows a person to about fifteen
households; with a birth date it is nearly always one person, and a birth date beside a
street address is the same. So a postcode is taken when a birth date or an address is in the
same fact, and a birth date when a postcode or an address is. "Born in 1985" or "lives near
SW1A" alone stay.
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
_S = "\ue000?"
"""A `script_seams` mark, where one may sit between CJK and digits."""
_DATE = (
    r"(?:\d{1,2}[./\-]\d{1,2}[./\-](?:19|20)?\d{2}|(?:19|20)\d{2}-\d{1,2}-\d{1,2}|"
    rf"\d{{1,2}}(?:st|nd|rd|th|\.|º|er)?\s+(?:de\s+|of\s+)?(?:{_MONTHS})\.?,?\s+(?:de\s+)?"
    rf"(?:19|20)\d{{2}}|(?:{_MONTHS})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+(?:19|20)\d{{2}}|"
    rf"(?:19|20){_S}\d{{2}}{_S}\s?(?:年|년){_S}\s?\d{{1,2}}{_S}\s?(?:月|월){_S}\s?\d{{1,2}}{_S}\s?(?:日|일))"
)
BIRTH_DATE = re.compile(
    r"(?i)(?:\bborn(?:\s+on)?|\bd\.?o\.?b\.?|date\s+of\s+birth|birthday(?:\s+is)?|"
    r"geboren(?:\s+am|\s+op)?|geburtsdatum|né(?:e)?\s+le|date\s+de\s+naissance|"
    r"nacid[oa]\s+el|fecha\s+de\s+nacimiento|nat[oa]\s+il|data\s+di\s+nascita|"
    r"nascid[oa]\s+(?:em|a)|data\s+de\s+nascimento|geboortedatum|urodzon[ya]|"
    r"data\s+urodzenia|родил(?:ся|ась)|дата\s+рождения|doğum\s+tarihi|生年月日|出生日期|生日|"
    r"생년월일|syntymäaika|född|født|fødselsdato|narozen[aá]?|datum\s+narození|született|"
    r"születési\s+dátum)\W{0,3}(?:は|은|는)?\W{0,2}\s*"
    rf"(?P<date>{_DATE})"
)
LABELLED_POSTCODE = re.compile(
    r"(?i)(?:\bpost\s?code|postal\s+code|\bzip(?:\s+code)?|\bplz|postleitzahl|code\s+postal|"
    r"\bc\.p\.|código\s+postal|\bcap\b|postnummer|postinumero|irányítószám|kod\s+pocztowy|"
    r"почтовый\s+индекс|posta\s+kodu|郵便番号|〒|邮编|邮政编码|우편번호)\W{0,3}(?:は|은|는)?\W{0,2}\s*"
    r"(?P<code>(?=[A-Z\-\s]*\d)[A-Z0-9][A-Z0-9\-\s]{1,8}[A-Z0-9])(?![\w])"
)
"""Any country's postcode, where the words before say it is one."""
_ADDRESS_PLACEHOLDER = "[ADDRESS]"


def find(text: str) -> Iterable[tuple[int, int, str]]:
    """Postcode and birth-date spans, only when the fact holds two of postcode, birth date
    and an already-redacted address."""
    postcodes = [(m.start(), m.end(), "postcode") for m in UK_POSTCODE.finditer(text)]
    postcodes += [
        (m.start("code"), m.end("code"), "postcode")
        for m in LABELLED_POSTCODE.finditer(text)
        if not any(start <= m.start("code") < end for start, end, _ in postcodes)
    ]
    births = [(m.start("date"), m.end("date"), "birth_date") for m in BIRTH_DATE.finditer(text)]
    address = _ADDRESS_PLACEHOLDER in text
    spans: list[tuple[int, int, str]] = []
    if postcodes and (births or address):
        spans += postcodes
    if births and (postcodes or address):
        spans += births
    return sorted(spans)
