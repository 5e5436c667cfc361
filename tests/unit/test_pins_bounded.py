"""Pins that stay right: found in every phrasing, never chatter, bounded, newest shown,
removable, and handed to the summary when the cap pushes them out."""

from __future__ import annotations

import pytest
from langchain_core.messages import BaseMessage, HumanMessage

from recollect.history.pinning import (
    MAX_PINNED_INSTRUCTIONS,
    MAX_PINNED_VALUES,
    eviction_note,
    merge_pins,
    new_pins,
    pin_change,
    pins_from_text,
)
from recollect.history.records import PinnedValue
from recollect.history.summary import extractive_fold, render_for_fold
from recollect.prebuilt.prompt import build_prompt
from recollect.state.context import Context


def found(text: str) -> dict[str, str]:
    return {p["value"]: p["kind"] for p in pins_from_text(text, "m", from_tool=False).values()}


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("My order is 884213.", "884213"),
        ("my order number is 884213", "884213"),
        ("Order no. 884213 never arrived", "884213"),
        ("Meine Bestellung 884213 ist nicht angekommen.", "884213"),
        ("Bestellnummer: 884213", "884213"),
        ("Ma commande 884213 n'est pas arrivée.", "884213"),
        ("Mi pedido 884213 no ha llegado.", "884213"),
        ("Il mio ordine 884213 è in ritardo.", "884213"),
        ("注文番号は884213です。", "884213"),
        ("我的订单号是884213。", "884213"),
        ("Мой заказ 884213 не пришёл.", "884213"),
    ],
)
def test_order_numbers_are_pinned_in_every_phrasing_and_language(text: str, value: str) -> None:
    assert found(text).get(value) == "order", found(text)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Es kostete 249,00 € zu viel.", "249,00 €"),
        ("The refund is 1.249,50 € please", "1.249,50 €"),
        ("charged 249,00 EUR twice", "249,00 EUR"),
        ("It was $249.00", "$249.00"),
        ("That is 12 €", "12 €"),
    ],
)
def test_amounts_in_european_notation_are_pinned(text: str, value: str) -> None:
    assert found(text).get(value) == "amount", found(text)


@pytest.mark.parametrize(
    "text",
    [
        "I don't know, maybe",
        "Never mind",
        "never mind, it works now",
        "I want to cry",
        "I never liked that store anyway",
        "I always forget my password",
        "Don't worry about it",
        "I would like a coffee",
        "honestly I don't care",
    ],
)
def test_chatter_is_not_pinned_as_a_constraint_or_preference(text: str) -> None:
    assert found(text) == {}, found(text)


@pytest.mark.parametrize(
    ("text", "value", "kind"),
    [
        ("Never suggest jQuery.", "Never suggest jQuery", "constraint"),
        ("Please don't call me before 9am", "don't call me before 9am", "constraint"),
        ("You must not share my address", "You must not share my address", "constraint"),
        ("Keep answers short", "Keep answers short", "constraint"),
        ("I prefer metric units", "I prefer metric units", "preference"),
        ("I want you to answer in German", "I want you to answer in German", "preference"),
        ("order 5521-K, never call before 9am", "never call before 9am", "constraint"),
        ("One rule: never suggest jQuery.", "never suggest jQuery", "constraint"),
    ],
)
def test_instructions_addressed_to_the_assistant_are_pinned(
    text: str, value: str, kind: str
) -> None:
    assert found(text).get(value) == kind, found(text)


def test_a_restated_value_moves_to_the_newest_place() -> None:
    first = HumanMessage(content="order 8842-B", id="h1")
    others = [HumanMessage(content=f"order {i:04d}-Q", id=f"o{i}") for i in range(5)]
    pins = merge_pins({}, new_pins({}, [first, *others]))
    assert next(iter(pins.values()))["value"] == "8842-B"
    again = HumanMessage(content="about order 8842-B again", id="h2")
    pins = merge_pins(pins, new_pins(pins, [again]))
    assert list(pins.values())[-1]["value"] == "8842-B"
    assert list(pins.values())[-1]["source_message_id"] == "h2"


def test_a_thousand_order_ids_are_capped_oldest_out_newest_shown_and_handed_to_the_fold() -> None:
    pins: dict[str, PinnedValue] = {}
    evicted: list[PinnedValue] = []
    for i in range(1000):
        change = pin_change(pins, [HumanMessage(content=f"order {i:06d}-Z", id=f"h{i}")])
        pins = merge_pins(pins, change.update)
        evicted += change.evicted
    assert len(pins) == MAX_PINNED_VALUES
    assert len(evicted) == 1000 - MAX_PINNED_VALUES, "every pin the cap dropped is counted"
    assert list(pins.values())[-1]["value"] == "000999-Z"
    prompt = build_prompt({"messages": [], "pinned": pins}, Context(context_tokens=4000))
    section = prompt.messages[0].text.split("## Pinned values\n")[1]
    assert section.startswith("- order: 000999-Z"), "the newest is shown first"
    note = eviction_note(evicted[-3:], "h999")
    assert note is not None
    assert "order 000949-Z" in render_for_fold(note)
    assert "000949-Z" in extractive_fold("", [note], 200), "the summary keeps it"


def test_chatty_constraints_cannot_hide_an_order_number() -> None:
    messages: list[BaseMessage] = [HumanMessage(content="My order is 8842-B.", id="order")]
    messages += [
        HumanMessage(content=f"Never mention topic {i} again, please.", id=f"c{i}")
        for i in range(60)
    ]
    pins: dict[str, PinnedValue] = {}
    for message in messages:
        pins = merge_pins(pins, new_pins(pins, [message]))
    kinds = [p["kind"] for p in pins.values()]
    assert kinds.count("constraint") == MAX_PINNED_INSTRUCTIONS
    prompt = build_prompt({"messages": [], "pinned": pins}, Context(context_tokens=3000))
    assert "8842-B" in prompt.messages[0].text


def test_a_pin_can_be_removed_by_the_reducer_and_retracted_in_conversation() -> None:
    pins = merge_pins({}, new_pins({}, [HumanMessage(content="My order is 884213.", id="a")]))
    assert [p["value"] for p in pins.values()] == ["884213"]
    assert merge_pins(pins, {"order:884213": None}) == {}
    correction = HumanMessage(content="Sorry, not 884213, my order is 884214.", id="b")
    pins = merge_pins(pins, new_pins(pins, [correction]))
    assert [p["value"] for p in pins.values()] == ["884214"]
    forget = HumanMessage(content="Please forget order 884214.", id="c")
    assert merge_pins(pins, new_pins(pins, [forget])) == {}
