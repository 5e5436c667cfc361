"""Facts that change, lists that grow, and what was true before: the write path end to end."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from psycopg_pool import ConnectionPool

from recollect.extraction.fact_writer import EngineWriter
from recollect.longterm.configured import configured_judge
from recollect.longterm.records import FactCategory, NewFact, RememberAction
from recollect.longterm.rule_judge import RuleJudge
from recollect.longterm.supersession import ModelJudge
from recollect.privacy.export import export_user
from recollect.privacy.lifecycle import RetentionPolicy, run_maintenance
from recollect.store.scope import Scope
from recollect.store.server import CONNECTION_KWARGS
from recollect.store.tenancy import scoped
from tests.support.memory import memory_over
from tests.support.scripted_openai import JsonDict, Reply, ScriptedOpenAI, echo_responder

ANA = Scope.for_user("acme", "ana")
T0 = datetime(2026, 1, 1, tzinfo=UTC)
DAY = timedelta(days=1)


@pytest.fixture
def admin(database_uri: str) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(database_uri, **CONNECTION_KWARGS) as conn:
        yield conn


def said(text: str, category: FactCategory, days: float = 0, subject: str | None = None) -> NewFact:
    return NewFact(text=text, category=category, subject=subject, learned_at=T0 + days * DAY)


def test_an_allergy_list_keeps_both_and_a_retraction_ends_one(
    pool: ConnectionPool[Any], scripted_llm: ScriptedOpenAI
) -> None:
    memory = memory_over(pool, scripted_llm)
    writer = EngineWriter(memory)
    with scoped(pool, ANA) as conn:
        writer.remember(
            conn, ANA, said("Allergic to peanuts", FactCategory.CONSTRAINT, 0, "allergies")
        )
        writer.remember(
            conn, ANA, said("Allergic to shellfish", FactCategory.CONSTRAINT, 1, "allergy")
        )
    assert {f.text for f in memory.facts(ANA)} == {"Allergic to peanuts", "Allergic to shellfish"}
    assert set(memory.profile(ANA).values("constraints")) == {
        "Allergic to peanuts",
        "Allergic to shellfish",
    }
    found = memory.recall(ANA, "satay with peanut sauce", now=T0 + 2 * DAY)
    # Constraints live in the profile, which every recall returns; shown there, not twice.
    constraints = [e.value for e in found.profile if e.key == "constraints"]
    assert constraints == ["Allergic to peanuts; Allergic to shellfish"]
    assert "Allergic to peanuts" not in [r.fact.text for r in found.facts]
    searched = memory.recall(ANA, "satay with peanut sauce", now=T0 + 2 * DAY, repeat_profile=True)
    assert "Allergic to peanuts" in [r.fact.text for r in searched.facts]
    assert not scripted_llm.chat_requests, "an addition to a list never asks a judge"

    with scoped(pool, ANA) as conn:
        writer.remember(
            conn, ANA, said("No longer allergic to peanuts", FactCategory.CONSTRAINT, 3)
        )
    ended = writer.last
    assert ended is not None
    assert ended.action is RememberAction.SUPERSEDED
    assert {f.text for f in memory.facts(ANA)} == {"Allergic to shellfish"}, "a retraction"
    assert ended.fact.valid_to == ended.fact.learned_at, "kept as the record, never live"
    assert memory.profile(ANA).values("constraints") == ["Allergic to shellfish"]


def test_where_did_i_live_before_is_answered_by_as_of(
    pool: ConnectionPool[Any], admin: psycopg.Connection[Any]
) -> None:
    memory = memory_over(pool, None)
    memory.remember(ANA, said("Lives in Paris", FactCategory.BIOGRAPHICAL, 0))
    moved = memory.remember(ANA, said("Moved to Berlin", FactCategory.BIOGRAPHICAL, 100))
    assert moved.action is RememberAction.SUPERSEDED, "subjects inferred from the wording"
    history = {f.text: f for f in memory.facts(ANA, include_superseded=True)}
    assert history["Lives in Paris"].valid_to == T0 + 100 * DAY
    assert history["Moved to Berlin"].valid_to is None

    now = [r.fact.text for r in memory.recall(ANA, "where do I live Paris Berlin").facts]
    assert now == ["Moved to Berlin"]
    before = memory.recall(ANA, "where do I live Paris Berlin", as_of=T0 + 50 * DAY)
    assert [r.fact.text for r in before.facts] == ["Lives in Paris"]
    with pytest.raises(ValueError, match="timezone-aware"):
        memory.recall(ANA, "where", as_of=datetime(2026, 2, 1))

    # Forgetting the successor and purging it keeps the older version as history only.
    assert memory.forget(ANA, moved.fact.id)
    run_maintenance(admin, RetentionPolicy(), now=datetime.now(UTC) + 40 * DAY)
    assert memory.facts(ANA) == [], "the old home does not come back to life"
    kept = memory.facts(ANA, include_superseded=True)
    assert [f.text for f in kept] == ["Lives in Paris"]
    again = memory.recall(ANA, "where do I live Paris", as_of=T0 + 50 * DAY)
    assert [r.fact.text for r in again.facts] == ["Lives in Paris"]
    exported = {f["text"]: f for f in export_user(pool, ANA)["facts"]}
    assert exported["Lives in Paris"]["status"] == "superseded", "history, not live, in an export"


def _judge_says(contradicts: bool) -> Any:
    def respond(request: JsonDict) -> Reply:
        if "Old:" in json.dumps(request.get("messages")):
            return Reply(json=json.dumps({"contradicts": contradicts}))
        return echo_responder(request)

    return respond


def test_the_model_judge_is_wired_by_default_and_decides_across_subjects(
    pool: ConnectionPool[Any], scripted_llm: ScriptedOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    judge = configured_judge()
    assert isinstance(judge, ModelJudge), "a configured chat model judges by default"
    monkeypatch.setenv("RECOLLECT_JUDGE", "none")
    assert configured_judge() is None
    scripted_llm.set_default(_judge_says(True))
    memory = memory_over(pool, scripted_llm, judge)
    memory.remember(ANA, said("Tom is my manager", FactCategory.BIOGRAPHICAL, 0, "manager"))
    new = memory.remember(
        ANA, said("My manager is Priya now", FactCategory.BIOGRAPHICAL, 5, "line_lead")
    )
    assert new.action is RememberAction.SUPERSEDED
    assert new.decided_by == "model"
    assert [f.text for f in memory.facts(ANA)] == ["My manager is Priya now"]
    assert any("Old: Tom is my manager" in json.dumps(r) for r in scripted_llm.chat_requests)


def test_offline_the_rule_judges_and_the_rule_decides(pool: ConnectionPool[Any]) -> None:
    assert isinstance(configured_judge(), RuleJudge)
    memory = memory_over(pool, None)
    memory.remember(ANA, said("Uses Postgres 15", FactCategory.TECHNICAL_STACK, 0))
    memory.remember(ANA, said("Uses Redis", FactCategory.TECHNICAL_STACK, 1))
    assert {f.text for f in memory.facts(ANA)} == {"Uses Postgres 15", "Uses Redis"}
    switched = memory.remember(
        ANA, said("Switched from Postgres to MySQL", FactCategory.TECHNICAL_STACK, 2)
    )
    assert switched.replaced
    assert switched.decided_by == "rule"
    assert {f.text for f in memory.facts(ANA)} == {"Uses Redis", "Switched from Postgres to MySQL"}


def test_an_extractor_update_names_the_fact_it_replaces(pool: ConnectionPool[Any]) -> None:
    memory = memory_over(pool, None)
    old = memory.remember(ANA, said("Drinks tea every morning", FactCategory.PREFERENCE, 0, "tea"))
    new = memory.remember(
        ANA,
        NewFact(
            text="Has coffee in the mornings",
            category=FactCategory.PREFERENCE,
            subject="morning_routine",
            learned_at=T0 + DAY,
            replaces=(old.fact.id, "not-an-id"),
        ),
    )
    assert new.replaced == (old.fact.id,)
    assert new.decided_by == "extractor"
    assert [f.text for f in memory.facts(ANA)] == ["Has coffee in the mornings"]
