"""A worker's brief stays within its budget whatever it is fed; a handoff keeps only what can
be traced, merges repeats, carries numbers as facts, and stays within its cap."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recollect.delegation.brief import BlackboardError, build_brief, check_blackboard
from recollect.delegation.handoff import distill, handoff_tokens, render_handoff
from recollect.delegation.plan import split_task
from recollect.delegation.records import ReportedFact, WorkerReport
from recollect.history.truncation import text_tokens
from recollect.longterm.records import (
    FactCategory,
    ProfileEntry,
    RecalledFact,
    Recollection,
    StoredFact,
)

NOW = datetime(2026, 1, 1, tzinfo=UTC)
TEXTS = st.text(
    alphabet=st.characters(categories=("L", "N", "P", "Zs")), min_size=0, max_size=2000
)  # latin, cjk, digits, punctuation


def recollection(texts: list[str]) -> Recollection:
    facts = tuple(
        RecalledFact(
            fact=StoredFact(
                id=f"f{n}",
                org_id="o",
                user_id="u",
                session_id=None,
                category=FactCategory.PREFERENCE,
                subject=None,
                text=text or "x",
                confidence=0.9,
                source_ids=(),
                learned_at=NOW,
                last_reinforced_at=NOW,
            ),
            score=1.0 / (n + 1),
        )
        for n, text in enumerate(texts)
    )
    return Recollection(profile=(ProfileEntry(key="name", value="Ana"),), facts=facts)


@settings(max_examples=60, deadline=None)
@given(
    task=st.text(min_size=1, max_size=400),
    board=st.dictionaries(st.text(min_size=1, max_size=20), TEXTS, max_size=12),
    notes=st.dictionaries(st.text(min_size=1, max_size=20), TEXTS, max_size=6),
    recalled=st.lists(TEXTS, max_size=40),
    budget=st.integers(min_value=1, max_value=3000),
)
def test_the_brief_never_exceeds_its_budget(
    task: str, board: dict[str, str], notes: dict[str, str], recalled: list[str], budget: int
) -> None:
    asked: list[int] = []

    def recall(left: int) -> Recollection:
        asked.append(left)
        return recollection(recalled)

    brief = build_brief(task, budget=budget, blackboard=board, notes=notes, recall=recall)
    shared = brief.total - brief.tokens["task"]
    assert shared <= max(budget - text_tokens(task), 0)
    assert text_tokens(brief.render()) <= shared, "the rendering costs what was charged"
    assert all(left <= budget for left in asked)
    for shown, source in brief.sources.items():
        assert f"[{shown}]" in brief.render()
        assert source.split(":", 1)[0] in ("memory", "board", "note")


def test_blackboard_first_then_notes_then_recall_and_recall_gets_what_is_left() -> None:
    asked: list[int] = []

    def recall(left: int) -> Recollection:
        asked.append(left)
        return recollection(["likes tea", "lives in Lisbon"])

    brief = build_brief(
        "find a venue",
        budget=200,
        blackboard={"budget": "1200 EUR"},
        notes={"k": "v"},
        recall=recall,
    )
    assert [s.heading for s in brief.sections] == ["Blackboard", "Your notes", "Recalled memories"]
    assert asked == [
        200 - brief.tokens["task"] - brief.tokens["blackboard"] - brief.tokens["notes"]
    ]
    assert brief.sources["m1"] == "memory:profile:name"
    assert brief.sources["board:budget"] == "board:budget"


def test_a_zero_budget_is_refused() -> None:
    with pytest.raises(ValueError, match="positive number of tokens"):
        build_brief("t", budget=0, blackboard={}, notes={}, recall=None)


SOURCES = {"m1": "memory:f1", "m2": "memory:f2", "board:budget": "board:budget"}


def test_invented_sources_are_dropped_and_unsourced_facts_become_questions() -> None:
    report = WorkerReport(
        summary="Found the venue.",
        facts=[
            ReportedFact(text="Venue is Lisbon", sources=["m1", "[zz9]"]),
            ReportedFact(text="Guess: 40 guests", sources=["nothing"]),
            ReportedFact(text="Budget is 1,200 EUR", sources=["[board:budget]"]),
        ],
    )
    handoff = distill(report, SOURCES, max_tokens=400)
    assert [(f.text, f.sources, f.learned) for f in handoff.facts] == [
        ("Venue is Lisbon", ("memory:f1",), False),
        ("Budget is 1,200 EUR", ("board:budget",), True),
    ]
    assert handoff.dropped_sources == 2
    assert handoff.open_questions == ("Unsourced: Guess: 40 guests",)


@pytest.mark.parametrize(
    ("first", "second"),
    [("Venue is Lisbon.", "venue  is lisbon"), ("Café Ó opens at 9", "CAFÉ ó opens at 9.")],
)
def test_repeats_merge_into_one_fact_with_every_source(first: str, second: str) -> None:
    report = WorkerReport(
        summary="",
        facts=[ReportedFact(text=first, sources=["m1"]), ReportedFact(text=second, sources=["m2"])],
    )
    [merged] = distill(report, SOURCES, max_tokens=400, fallback_summary="reply").facts
    assert merged.text == first
    assert merged.sources == ("memory:f1", "memory:f2")


@pytest.mark.parametrize("number", ["1200", "1,200", "30.5", "8842"])
def test_a_number_only_in_the_summary_is_flagged(number: str) -> None:
    report = WorkerReport(summary=f"The budget is {number} EUR.", facts=[])
    handoff = distill(report, SOURCES, max_tokens=400)
    assert handoff.open_questions == (f"Number only in the summary, unsourced: {number}",)
    backed = WorkerReport(
        summary=f"The budget is {number} EUR.",
        facts=[ReportedFact(text=f"Budget: {number} EUR", sources=["board:budget"])],
    )
    assert distill(backed, SOURCES, max_tokens=400).open_questions == ()


@settings(max_examples=60, deadline=None)
@given(
    summary=TEXTS,
    facts=st.lists(st.tuples(TEXTS, st.sampled_from(sorted(SOURCES))), max_size=30),
    cap=st.integers(min_value=8, max_value=600),
)
def test_a_handoff_never_exceeds_its_cap_and_never_cuts_a_fact(
    summary: str, facts: list[tuple[str, str]], cap: int
) -> None:
    report = WorkerReport(
        summary=summary, facts=[ReportedFact(text=t, sources=[s]) for t, s in facts]
    )
    handoff = distill(report, SOURCES, max_tokens=cap)
    assert handoff_tokens(handoff) <= cap
    reported = {" ".join(t.split()) for t, _ in facts}
    assert all(f.text in reported for f in handoff.facts), "facts are kept whole or dropped"
    assert render_handoff(handoff).count("\n") >= len(handoff.facts) - 1


@pytest.mark.parametrize(
    ("task", "parts"),
    [
        ("Find a venue", ["Find a venue"]),
        ("- venue\n- budget\n\n- food", ["venue", "budget", "food"]),
        ("1. venue 2) budget", ["venue 2) budget"]),
        ("venue; budget; venue", ["venue", "budget"]),
        ("Where? When! Who.", ["Where?", "When!", "Who."]),
        ("会場を探す。予算を確認する。", ["会場を探す。予算を確認する。"]),
    ],
)
def test_split_task(task: str, parts: list[str]) -> None:
    assert split_task(task, 8) == parts


def test_split_task_caps_the_workers() -> None:
    assert split_task("\n".join(f"q{n}" for n in range(20)), 8) == [f"q{n}" for n in range(8)]
    with pytest.raises(ValueError, match="at least 1"):
        split_task("x", 0)


@pytest.mark.parametrize(
    ("board", "message"),
    [
        ({f"k{n}": "v" for n in range(65)}, "65 keys; at most 64"),
        ({"doc": "word " * 2000}, "holds 2500 tokens, more than a worker's whole budget (1500)"),
        ({"": "v"}, "non-empty text keys"),
        ({"k": 3}, "non-empty text keys"),
    ],
)
def test_a_blackboard_no_brief_can_hold_is_refused_before_any_work(
    board: dict[str, object], message: str
) -> None:
    with pytest.raises(BlackboardError, match=re.escape(message)):
        check_blackboard(board, 1500)  # type: ignore[arg-type]
    check_blackboard({"budget": "1200 EUR"}, 1500)
