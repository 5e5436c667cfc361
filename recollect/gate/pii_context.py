"""What the words before a number say it is.

The same digits can be a card or an order id; "order number 4111 1111 1111 1111" is a
reference the user needs remembered, "card 4111 …" is not. A detector asks `named_reference`
before it takes a number that its checksum alone would take.
"""

from __future__ import annotations

import re

_REFERENCE = re.compile(
    r"\b(?:order|tracking|invoice|ticket|booking|confirmation|reservation|reference|ref|serial|"
    r"sku|isbn|issn|part|case|shipment|parcel|package|receipt|transaction|claim|policy|"
    r"member(?:ship)?|customer|account\s+ref|po|rma|build|version|release|ver|v|model|"
    r"product|item|lot|batch|flight|train|room|seat|gate|page|pr|issue|commit|"
    r"bestell\w*|auftrag\w*|rechnung\w*|sendung\w*|commande|facture|colis|pedido|factura|"
    r"ordine|fattura|encomenda|fatura|bestelling|factuur|zamówieni\w*|faktur\w*|sipariş|"
    r"заказ\w*|счёт|订单|訂單|注文|주문)"
    r"\s*(?:no\.?|nr\.?|n[°º]|number|num\.?|nummer|numéro|número|numero|#|id|code|ids)?"
    r"\s*(?:is|was|ist|est|es|è|é|:|#|=|-)?\s*$",
    re.IGNORECASE,
)
_VERSION = re.compile(r"(?:\bv|\bversion|\bbuild|\brelease|\bver\.?)\s*$", re.IGNORECASE)


def named_reference(text: str, start: int) -> bool:
    """True when the words right before `start` call what follows an order, ticket, version
    or other reference number."""
    return bool(_REFERENCE.search(text[max(0, start - 40) : start]))


def after_version(text: str, start: int) -> bool:
    """True right after "version", "build", "v" and the like."""
    return bool(_VERSION.search(text[max(0, start - 12) : start]))


def words_before(text: str, start: int, pattern: re.Pattern[str], span: int = 40) -> bool:
    """True when `pattern` occurs in the `span` characters before `start`."""
    return bool(pattern.search(text[max(0, start - span) : start]))
