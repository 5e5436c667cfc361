"""The cheap contradiction rule, without a database."""

from __future__ import annotations

from recollect.longterm.records import FactCategory
from recollect.longterm.subjects import infer_subject, is_multi_valued, normalise_subject
from recollect.longterm.supersession import Decision, Neighbour, decide, normalise, numbers


def n(id_: str, text: str, subject: str | None = None, sim: float | None = None) -> Neighbour:
    return Neighbour(id_, text, subject, sim)


def test_same_wording_reinforces_whatever_the_case_and_punctuation() -> None:
    assert normalise("Prefers  dark-mode!") == "prefers dark mode"
    assert decide("prefers dark mode", None, [n("1", "Prefers dark mode.")]).reinforce == "1"


def test_same_subject_with_another_value_supersedes() -> None:
    d = decide("moved to React 19", "frontend", [n("1", "uses React 16", "frontend", 0.8)])
    assert d.supersede == ("1",)
    assert d.reinforce is None


def test_a_near_identical_embedding_with_other_numbers_is_not_a_duplicate() -> None:
    assert numbers("uses React 16.8") == {"16.8"}
    d = decide("uses React 19", None, [n("1", "uses React 16", None, 0.97)])
    assert d.reinforce is None
    assert d.ask == (n("1", "uses React 16", None, 0.97),)
    same = decide("uses React 16 today", None, [n("1", "uses React 16", None, 0.97)])
    assert same.reinforce == "1"


def test_different_subjects_still_reach_the_judge() -> None:
    """Two models name one subject two ways: the rule cannot tell, so the judge decides."""
    d = decide("likes tea", "drink", [n("1", "likes coffee", "snack", 0.9)])
    assert d.ask == (n("1", "likes coffee", "snack", 0.9),)


def test_unrelated_neighbours_are_not_sent_to_the_judge() -> None:
    assert decide("likes tea", None, [n("1", "lives in Oslo", None, 0.05)]).ask == ()


def test_a_paraphrase_on_the_same_subject_reinforces_rather_than_replaces() -> None:
    old = n("1", "their frontend is React 16", "frontend", 0.95)
    assert decide("uses React 16 for the frontend", "frontend", [old]).reinforce == "1"
    assert decide("uses React 19 for the frontend", "frontend", [old]).supersede == ("1",)


def test_an_addition_to_a_list_never_supersedes_it() -> None:
    peanuts = n("1", "Allergic to peanuts", "allergy", 0.9)
    d = decide("Allergic to shellfish", "allergy", [peanuts], multi_valued=True)
    assert d == Decision()
    tools = n("2", "Uses Postgres 15", "tool", 0.9)
    assert decide("Uses Redis", "tool", [tools], multi_valued=True) == Decision()


def test_a_retraction_ends_only_the_value_it_names() -> None:
    peanuts = n("1", "Allergic to peanuts", "allergy", 0.9)
    shellfish = n("2", "Allergic to shellfish", "allergy", 0.9)
    d = decide("No longer allergic to peanuts", "allergy", [peanuts, shellfish], multi_valued=True)
    assert d.supersede == ("1",)
    postgres = n("3", "Uses Postgres 15", "tool", 0.9)
    redis = n("4", "Uses Redis", "tool", 0.9)
    d = decide("Switched from Postgres to MySQL", "tool", [postgres, redis], multi_valued=True)
    assert d.supersede == ("3",)
    french = n("5", "Spricht Französisch", "language", 0.9)
    german = decide("Spricht nicht mehr Französisch", "language", [french], multi_valued=True)
    assert german.supersede == ("5",)


def test_different_subjects_reach_the_judge_when_related() -> None:
    old = n("1", "Lives in Paris", "location", 0.8)
    assert decide("Moved to Berlin", "relocation", [old]).ask == (old,)


def test_subjects_are_normalised_and_inferred() -> None:
    assert normalise_subject("My Allergies") == "allergy"
    assert normalise_subject("user's home city") == "location"
    assert normalise_subject("  ") is None
    assert infer_subject("Moved to Berlin", FactCategory.BIOGRAPHICAL) == "location"
    assert infer_subject("Wohnt in München", FactCategory.BIOGRAPHICAL) == "location"
    assert infer_subject("Allergic to shellfish", FactCategory.CONSTRAINT) == "allergy"
    assert is_multi_valued("allergy", FactCategory.PREFERENCE)
    assert is_multi_valued("food_allergy", FactCategory.BIOGRAPHICAL)
    assert not is_multi_valued("location", FactCategory.BIOGRAPHICAL)
    assert not is_multi_valued("favourite_language", FactCategory.PREFERENCE)
    assert not is_multi_valued("frontend_framework", FactCategory.TECHNICAL_STACK)
    assert is_multi_valued(None, FactCategory.CONSTRAINT)


def test_a_job_title_naming_a_manager_is_a_role_and_anymore_ends_a_value() -> None:
    assert infer_subject("Works as an engineering manager now", FactCategory.BIOGRAPHICAL) == "role"
    assert infer_subject("Tom is the user's manager", FactCategory.BIOGRAPHICAL) == "manager"
    cats = n("1", "Allergic to cats", "allergy", 0.9)
    d = decide("Not allergic to cats anymore", "allergy", [cats], multi_valued=True)
    assert d.supersede == ("1",)
