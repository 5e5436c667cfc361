"""The word half of the near-duplicate rule, and the per-embedder threshold."""

from __future__ import annotations

import pytest

from recollect.longterm.duplicates import (
    UNKNOWN_EMBEDDER_SIMILARITY,
    content_words,
    is_repeat,
    near_duplicate_similarity,
    says_nothing_new,
    word_coverage,
)
from recollect.longterm.supersession import Neighbour, decide


class _Measured:
    def __init__(self, value: object) -> None:
        self.near_duplicate_similarity = value


def test_an_embedder_states_its_threshold_and_others_get_the_conservative_one() -> None:
    assert near_duplicate_similarity(_Measured(0.94)) == 0.94
    assert near_duplicate_similarity(None) == UNKNOWN_EMBEDDER_SIMILARITY
    assert near_duplicate_similarity(object()) == UNKNOWN_EMBEDDER_SIMILARITY


@pytest.mark.parametrize("value", [0, -0.5, 1.5, "0.9", True, None])
def test_a_nonsense_threshold_on_an_embedder_is_ignored(value: object) -> None:
    assert near_duplicate_similarity(_Measured(value)) == UNKNOWN_EMBEDDER_SIMILARITY


def test_restatements_say_nothing_new() -> None:
    assert content_words("The user prefers dark mode.") == {"prefer", "dark", "mod"}
    assert says_nothing_new("The user prefers tea to coffee.", "Prefers tea over coffee")
    assert says_nothing_new("Lives in Lisbon", "The user lives in Lisbon, Portugal")
    assert says_nothing_new("uses React 16 today", "uses React 16")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Likes coffee", "Doesn't like coffee"),  # negation
        ("Doesn't like coffee", "Likes coffee"),
        ("Used to work as a nurse", "Works as a nurse"),  # a state that ended
        ("Uses React 16", "Uses React 19"),  # another number
        ("Gina's favourite dance is tango.", "Jon's favourite dance is tango."),  # another person
        ("Lives in Lisbon", "The user lives in Lisbon, Portugal"),  # adds a detail
        ("Prefers dark mode", "Prefers light mode"),
    ],
)  # fmt: skip
def test_a_change_or_an_addition_is_something_new(old: str, new: str) -> None:
    assert not says_nothing_new(new, old)
    assert not is_repeat(new, old, 0.99, 0.9)


def test_coverage_counts_the_new_facts_words() -> None:
    assert word_coverage("Likes coffee and tea", "Likes coffee") == pytest.approx(2 / 3)
    assert word_coverage("the and of", "anything") == 1.0


def test_the_rule_needs_both_halves() -> None:
    assert is_repeat("User is a vegetarian", "The user is vegetarian.", 0.95, 0.94)
    assert not is_repeat("User is a vegetarian", "The user is vegetarian.", 0.93, 0.94)
    assert not is_repeat("User is a vegetarian", "The user is vegetarian.", None, 0.94)


def test_distinct_events_above_the_old_threshold_are_not_reinforced() -> None:
    talk = "Caroline gave a talk at a school event about her transgender journey."
    conference = "Caroline attended an LGBTQ conference recently and felt accepted."
    decision = decide(conference, None, [Neighbour("1", talk, None, 0.936)], near_duplicate=0.92)
    assert decision.reinforce is None
