"""The cheap contradiction rule, without a database."""

from __future__ import annotations

from recollect.longterm.supersession import Neighbour, decide, normalise, numbers


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


def test_different_subjects_answer_the_question_without_the_model() -> None:
    d = decide("likes tea", "drink", [n("1", "likes coffee", "snack", 0.9)])
    assert d == decide("x", "drink", [])
    assert d.ask == ()


def test_unrelated_neighbours_are_not_sent_to_the_judge() -> None:
    assert decide("likes tea", None, [n("1", "lives in Oslo", None, 0.05)]).ask == ()


def test_a_paraphrase_on_the_same_subject_reinforces_rather_than_replaces() -> None:
    old = n("1", "their frontend is React 16", "frontend", 0.95)
    assert decide("uses React 16 for the frontend", "frontend", [old]).reinforce == "1"
    assert decide("uses React 19 for the frontend", "frontend", [old]).supersede == ("1",)
