"""IBANs and card numbers, taken only when their check digits hold (mod 97, Luhn), so an
IBAN is never read as a phone number and an order number is never read as a card."""

from __future__ import annotations

import re
from collections.abc import Iterator

from recollect.gate.pii_patterns import CARD, card, find_ibans
from recollect.history.pins.found import Found


class Ibans:
    """IBANs in any spacing and case (the registry length of the country, then mod 97)."""

    in_tool_results = True

    def find(self, text: str) -> Iterator[Found]:
        for start, end in find_ibans(text):
            yield Found("iban", text[start:end], start, end)


class Cards:
    """Card numbers of 13-19 digits that pass Luhn and no word before calls a reference."""

    in_tool_results = True

    def find(self, text: str) -> Iterator[Found]:
        for match in CARD.finditer(text):
            if card(match) and not re.search(r"[./_]", match.group(0)):
                yield Found("card", match.group(0), *match.span())
