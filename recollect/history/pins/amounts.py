"""Amounts with their currency, whole and as written: `R$ 1.234,56`, `CHF 1'250.00`,
`12,800円`, `45,000원`, `₹2,49,999`, `EUR 480.00`, `1 299,99 zł`.

A number is an amount only next to a currency: a symbol or ISO 4217 code before or after it,
or a currency's own word (円, 元, 원, lei, euros). Thousands may be grouped by comma, dot,
apostrophe, space, no-break or thin space, or in Indian lakhs; the decimals by dot or comma.
ISO codes come from Babel's CLDR data: the currencies some territory uses today.
"""

# ruff: noqa: RUF001  (currency signs and narrow spaces are what these rules are about)
from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache

from babel import Locale
from babel.numbers import get_territory_currencies

from recollect.history.pins.found import Found

_SIGNS = (
    "R$", "A$", "AU$", "C$", "CA$", "HK$", "NZ$", "S$", "SG$", "MX$", "NT$", "US$", "CHF", "Fr.",
    "Rs.", "Rs", "Rp", "RM", "zł", "kr", "Kč", "Ft", "lei", "лв", "руб.", "руб", "$", "€", "£",
    "¥", "￥", "₹", "₩", "₽", "₺", "₪", "฿", "₫", "₱", "₴", "₦", "₲", "₵", "₡", "₸", "₼", "₾", "₭",
    "₮", "৳", "₨", "﷼", "元", "円", "원", "KSh", "S/.", "S/", "Bs.", "GH₵", "ر.س", "د.إ",
)  # fmt: skip
"""Written before or after the number; longer first, so `HK$` is not read as `$`."""
_WORDS_AFTER = (
    "euros", "euro", "Euro", "dollars", "dollar", "pounds", "yen", "rupees", "francs", "zloty",
    "złotych", "złote", "рублей", "рубля", "рубль", "lira", "TL", "บาท", "块", "圓", "萬円",
    "万円", "万元", "만원", "रुपये", "रुपए",
)  # fmt: skip
"""A currency's own word, written after the number."""
_NOT_CODES = frozenset({"ALL", "TOP", "CUP", "PEN", "BOB", "MOP", "SOS", "MAD", "BAM", "NAD"})
"""ISO codes that are also English words: taken only when written as other codes are not."""

_SPACE = r"[ \u00a0\u2009\u202f]"
_NUMBER = (
    r"(?<![\d.,'’])(?:\d{1,2}(?:,\d{2})+,\d{3}(?:\.\d{1,2})?"  # lakhs: 12,50,000
    rf"|\d{{1,3}}(?:[,.'’]\d{{3}})+(?:[.,]\d{{1,2}})?"  # 1,234.56  1.234,56  1'234.56
    rf"|\d{{1,3}}(?:{_SPACE}\d{{3}})+(?:[.,]\d{{1,2}})?"  # 1 234,56
    r"|\d+(?:[.,]\d{1,2})?)(?![\d])"
)


def _alternatives(items: tuple[str, ...] | list[str]) -> str:
    return "|".join(re.escape(item) for item in sorted(items, key=len, reverse=True))


_NUMBER_AFTER_SIGN = re.compile(rf"{_SPACE}?{_NUMBER}(?:{_SPACE}?[kKmM]\b)?")
_NUMBER_BEFORE_SIGN = re.compile(rf"{_NUMBER}{_SPACE}?$")


@cache
def _currencies() -> tuple[re.Pattern[str], frozenset[str]]:
    """Signs and currency words, or three capitals (checked against the ISO 4217 codes)."""
    words = _alternatives(_SIGNS + _WORDS_AFTER)
    territories = [str(t) for t in Locale("en").territories]
    current = {c for t in territories for c in get_territory_currencies(t)}
    codes = frozenset(current - _NOT_CODES)
    return re.compile(rf"(?:{words})|(?<![A-Za-z])[A-Z]{{3}}(?![A-Za-z])"), codes


class Amounts:
    """Amounts in any common currency notation; in tool results too (a refund, a balance).

    Currencies are found first and the number read beside them: a text is read once for a
    short list of signs, not once per sign at every number."""

    in_tool_results = True

    def find(self, text: str) -> Iterator[Found]:
        pattern, codes = _currencies()
        for currency in pattern.finditer(text):
            start, end = currency.span()
            token = currency.group(0)
            if token.isupper() and len(token) == 3 and token.isalpha() and token not in codes:
                continue
            letter_before = start > 0 and text[start - 1].isalpha() and token[0].isalpha()
            after = _NUMBER_AFTER_SIGN.match(text, end)
            if after and token not in _WORDS_AFTER and not letter_before:
                yield Found("amount", text[start : after.end()], start, after.end())
                continue
            if (
                end < len(text)
                and text[end].isalpha()
                and token[-1].isascii()
                and token[-1].isalpha()
            ):
                continue
            before = _NUMBER_BEFORE_SIGN.search(text, max(0, start - 40), start)
            if before:
                yield Found("amount", text[before.start() : end], before.start(), end)
