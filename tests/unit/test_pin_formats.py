"""Pins as classes: an amount keeps its currency whole, a date or id in any script is found,
an IBAN is an IBAN, and a correction unpins the value it corrects."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage

from recollect.history.pinning import merge_pins, new_pins, pins_from_text
from recollect.history.records import PinnedValue


def found(text: str) -> set[tuple[str, str]]:
    return {(p["kind"], p["value"]) for p in pins_from_text(text, "m", from_tool=False).values()}


def thread(*turns: str) -> dict[str, PinnedValue]:
    pins: dict[str, PinnedValue] = {}
    for i, text in enumerate(turns):
        pins = merge_pins(pins, new_pins(pins, [HumanMessage(content=text, id=f"h{i}")]))
    return pins


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        ("Custou R$ 1.234,56 no total", "amount", "R$ 1.234,56"),
        ("Der Preis war CHF 1'250.00", "amount", "CHF 1'250.00"),
        ("請求額は12,800円です", "amount", "12,800円"),
        ("The total was 1200¥ at the shop", "amount", "1200¥"),
        ("The rent is ₹ 1,20,000 per month", "amount", "₹ 1,20,000"),
        ("Kosztowało 249,99 zł", "amount", "249,99 zł"),
        ("가격은 12,000원이에요", "amount", "12,000원"),
        ("The deposit is EUR 480.00", "amount", "EUR 480.00"),
        ("Lieferung am 14.03.2025 bitte", "date", "14.03.2025"),
        ("予約は2025年3月14日です", "date", "2025年3月14日"),
        ("el 14 de marzo de 2025", "date", "14 de marzo de 2025"),
        ("주문번호는 884213입니다", "order", "884213"),
        ("मेरा ऑर्डर नंबर 884213 है", "order", "884213"),
        ("Mon numéro de commande est FR-99812.", "order", "FR-99812"),
        ("IBAN GB29 NWBK 6016 1331 9268 19", "iban", "GB29 NWBK 6016 1331 9268 19"),
        ("Card 5555 5555 5555 4444", "card", "5555 5555 5555 4444"),
    ],
)
def test_a_value_is_pinned_whole_as_its_kind(text: str, kind: str, value: str) -> None:
    assert found(text) == {(kind, value)}


def test_an_iban_with_a_wrong_check_digit_is_not_an_iban() -> None:
    assert ("iban", "DE88370400440532013000") not in found("IBAN DE88370400440532013000")


@pytest.mark.parametrize(
    "text",
    ["I was born in 1987.", "Meet at 10:30.", "Python 3.12.1", "3 out of 5", "iPhone 15 Pro"],
)
def test_years_times_versions_and_counts_are_not_values(text: str) -> None:
    assert found(text) == set()


@pytest.mark.parametrize(
    ("first", "correction", "new", "old"),
    [
        ("The refund was €1,249.50.", "Sorry, it was €1,294.50, not €1,249.50.", "€1,294.50",
         "€1,249.50"),
        ("My order is #4417.", "sorry, I meant #4471 not #4417", "4471", "4417"),
        ("Bestellung 5512", "Nein, nicht 5512, sondern 5521.", "5521", "5512"),
        ("注文番号は884213です", "すみません、884213ではなく884231です", "884231", "884213"),
        ("주문번호는 884213입니다", "884213이 아니라 884231입니다", "884231", "884213"),
        ("My email is dana@exmple.com", "correction: it's dana@example.com", "dana@example.com",
         "dana@exmple.com"),
    ],
)  # fmt: skip
def test_a_correction_unpins_the_old_value_and_pins_the_new(
    first: str, correction: str, new: str, old: str
) -> None:
    assert old in [p["value"] for p in thread(first).values()]
    values = [p["value"] for p in thread(first, correction).values()]
    assert new in values
    assert old not in values


@pytest.mark.parametrize(
    ("first", "correction"),
    [
        ("Bestellung 5512", "Nein, nicht 5512, sondern 5521."),
        ("My order is #4417.", "sorry, I meant #4471 not #4417"),
    ],
)
def test_the_new_value_of_a_correction_keeps_the_old_ones_kind(first: str, correction: str) -> None:
    pins = thread(first, correction)
    assert [p["kind"] for p in pins.values()] == ["order"]


def test_a_correction_naming_no_old_value_leaves_other_kinds_pinned() -> None:
    pins = thread("order 8842-B, mail dana@exmple.com", "Correction: dana@example.com")
    assert {p["value"] for p in pins.values()} == {"8842-B", "dana@example.com"}


def test_a_correction_that_restates_a_pinned_value_unpins_nothing() -> None:
    pins = thread("mail a@example.com or b@example.com", "Correction: write to a@example.com")
    assert {p["value"] for p in pins.values()} == {"a@example.com", "b@example.com"}
