"""Identifiers: order, booking, ticket, invoice, tracking, account and case numbers named by
their word in many languages (`order 884213`, `주문번호는 884213`, `ऑर्डर नंबर 4471-XY`,
`numéro de commande FR-99812`, `commit 3f2a9c1`), codes that look like one (`8842-B`,
`REQ-0042`), and `#4471`.

The word decides the kind; a value needs a digit and three characters, so "order 2 pizzas"
and "GPT-4" stay words.
"""

# ruff: noqa: RUF001  (full-width colons are what these rules are about)
from __future__ import annotations

import re
from collections.abc import Iterator

from recollect.history.pins.found import Found, lowered

KIND_WORDS: dict[str, str] = {
    "order": r"order|bestellnummer|bestellnr\.?|bestellung|bestelnummer|bestelling|auftragsnummer"
    r"|auftrag|commande|pedido|encomenda|ordine|ordinazione|zamówieni[ae]|заказ[а-я]*"
    r"|sipariş\w*|注文番号|注文|订单号|订单|訂單號|訂單|주문\s?번호|주문|ऑर्डर|आदेश",
    "booking": r"booking|reservation|confirmation|pnr|buchungsnummer|buchung|reservierungsnummer"
    r"|reservierung|réservation|reserva|prenotazione|boeking|rezerwacj[ai]|бронировани[ея]"
    r"|брони|rezervasyon\w*|予約番号|予約|预订号|预订|預訂|예약\s?번호|예약|बुकिंग",
    "ticket": r"ticketnummer|ticket|incident|vorgangsnummer|vorgang|chamado|工单|工單|티켓",
    "invoice": r"invoice|rechnungsnummer|rechnung|facture|factura|fattura|fatura|factuur"
    r"|faktur[ay]|счёт|счет|請求書番号|请求書|发票号|发票|인보이스|송장번호",
    "tracking": r"tracking|sendungsnummer|suivi|seguimiento|rastreamento|tracciamento"
    r"|追跡番号|运单号|快递单号|운송장\s?번호",
    "account": r"account|kundennummer|kontonummer|konto|compte|cuenta|conta|conto|口座番号",
    "case": r"case|fall|dossier|expediente|caso|pratica",
    "commit": r"commit",
    "reference": r"reference|ref|referenznummer|referenz|référence|referencia|referência"
    r"|riferimento|参照番号|参考号|참조\s?번호",
}
"""The words that name a number, by the kind they give it; longer forms before shorter."""

_NUMBER_WORD = (
    r"(?:number|no\.?|num\.?|nr\.?|n[°º]\.?|nummer|numéro|número|numero|numer|номер|"
    r"numaras[ıi]|numaram|번호|नंबर|संख्या|号|番号|#|id|code|ref\.?)"
)
_LINK = r"(?:is|was|=|ist|lautet|est|es|é|è|:|：|は|是|为|為|는|은|:|—|-)"
_VALUE = r"#?(?P<value>(?=[A-Za-z0-9/-]*\d)[A-Za-z0-9]{1,}(?:[-/][A-Za-z0-9]+)*)"

_ALPHABETIC = re.compile(r"[A-Za-z\u00c0-\u024f\u0400-\u04ff]")
"""Scripts that separate words: a kind word there must be a whole word (CJK has no spaces)."""
_ANY_KIND_WORD = re.compile("(?:" + "|".join(KIND_WORDS.values()) + ")")
KEYWORD_REFERENCE = re.compile(
    "(?:"
    + "|".join(f"(?P<{kind}>{words})" for kind, words in KIND_WORDS.items())
    + rf")(?!{_ALPHABETIC.pattern})(?:\s*{_NUMBER_WORD})?(?:\s*{_LINK})?\s*[:#]?\s*{_VALUE}"
    r"(?![a-z0-9_-]|\s?[年月日년월일])"
)
"""Matched on the lowered text from where a kind word starts (an alternation of words,
found first, is many times faster than this whole pattern tried at every position)."""
CODE_REFERENCE = re.compile(
    r"(?<![\w-])(?=(?:[A-Z-]*\d){3})(?=[A-Z0-9-]*[A-Z])[A-Z0-9]+(?:-[A-Z0-9]+)+(?![\w-])"
)
HASH_REFERENCE = re.compile(
    r"(?<![\w#&])#(?P<value>(?=(?:[A-Za-z-]*\d){3})[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*)(?![\w-])"
)


class KeywordReferences:
    """A number its word names; in tool results too (an order id in a lookup's answer)."""

    in_tool_results = True

    def find(self, text: str) -> Iterator[Found]:
        low = lowered(text)
        position = 0
        while anchor := _ANY_KIND_WORD.search(low, position):
            start = anchor.start()
            position = anchor.end()
            if start and _ALPHABETIC.match(low, start - 1):
                continue
            match = KEYWORD_REFERENCE.match(low, start)
            if match is None:
                continue
            value = text[match.start("value") : match.end("value")]
            if sum(ch.isalnum() for ch in value) >= 3:
                kind = next(k for k in KIND_WORDS if match.group(k) is not None)
                yield Found(kind, value, *match.span("value"))
                position = match.end()


class CodeReferences:
    """Upper-case codes with a dash and three digits: `8842-B`, `REQ-0042`, `KR-2025-001`."""

    in_tool_results = True

    def find(self, text: str) -> Iterator[Found]:
        for match in CODE_REFERENCE.finditer(text):
            yield Found("reference", match.group(0), *match.span())


class HashReferences:
    """`#4471`: a number written with `#` and at least three digits."""

    in_tool_results = False

    def find(self, text: str) -> Iterator[Found]:
        for match in HASH_REFERENCE.finditer(text):
            yield Found("reference", match.group("value"), *match.span("value"))
