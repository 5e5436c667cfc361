"""Retention, recovery, duplicate merging and incognito sessions, with a moved clock."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from psycopg_pool import ConnectionPool

from recollect.longterm.facts import LongTermMemory
from recollect.longterm.records import FactCategory, NewEpisode, NewFact
from recollect.privacy.lifecycle import (
    FactNotRestorableError,
    RetentionPolicy,
    end_session,
    restore_fact,
    run_maintenance,
)
from recollect.store.scope import Scope
from recollect.store.server import CONNECTION_KWARGS
from recollect.trace.store import PendingTrace, write_turns
from tests.support.db import all_rows

ANA = Scope.for_user("acme", "ana")
BO = Scope.for_user("acme", "bo")
T0 = datetime(2026, 1, 1, tzinfo=UTC)
DAY = timedelta(days=1)


@pytest.fixture
def admin(database_uri: str) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(database_uri, **CONNECTION_KWARGS) as conn:
        yield conn


def _fact(text: str, category: FactCategory, confidence: float = 0.9) -> NewFact:
    return NewFact(text=text, category=category, confidence=confidence, learned_at=T0)


def _live(pool: ConnectionPool[Any], scope: Scope) -> set[str]:
    return {f.text for f in LongTermMemory(pool).facts(scope)}


def test_each_category_expires_on_its_own_clock_and_restores_within_the_window(
    pool: ConnectionPool[Any], admin: psycopg.Connection[Any]
) -> None:
    memory = LongTermMemory(pool)
    memory.ingest(
        ANA,
        [
            _fact("prefers tea", FactCategory.PREFERENCE),
            _fact("lives in Lisbon", FactCategory.BIOGRAPHICAL),
            _fact("allergic to nuts", FactCategory.CONSTRAINT),
            _fact("wants to run a marathon", FactCategory.GOAL),
            _fact("maybe likes jazz", FactCategory.PREFERENCE, confidence=0.4),
        ],
    )
    policy = RetentionPolicy()

    early = run_maintenance(admin, policy, now=T0 + 10 * DAY)
    assert early.total() == 0
    assert set(early.categories) >= {c.value for c in FactCategory}
    assert len(_live(pool, ANA)) == 5

    month = run_maintenance(admin, policy, now=T0 + 31 * DAY)
    assert month.categories["goal"].expired == 1
    assert month.categories["preference"].expired_unreinforced == 1
    assert _live(pool, ANA) == {"prefers tea", "lives in Lisbon", "allergic to nuts"}

    goal = next(
        r["id"] for r in all_rows(pool, "SELECT id::text AS id FROM facts WHERE category = 'goal'")
    )
    restore_fact(admin, goal, policy, now=T0 + 40 * DAY)
    assert "wants to run a marathon" in _live(pool, ANA)

    year = run_maintenance(admin, policy, now=T0 + 400 * DAY)
    assert year.categories["biographical"].expired == 1
    assert year.categories["constraint"].expired == 0  # an allergy never expires by time
    assert year.categories["goal"].expired == 1
    assert year.categories["preference"].purged == 1  # the unreinforced one, past recovery
    assert _live(pool, ANA) == {"prefers tea", "allergic to nuts"}

    with pytest.raises(FactNotRestorableError, match="recovery window"):
        restore_fact(admin, goal, policy, now=T0 + 400 * DAY + 31 * DAY)
    later = run_maintenance(admin, policy, now=T0 + 400 * DAY + 31 * DAY)
    assert later.categories["goal"].purged == 1
    assert len(all_rows(pool, "SELECT id FROM facts")) == 2


def test_a_reinforced_fact_is_kept(
    pool: ConnectionPool[Any], admin: psycopg.Connection[Any]
) -> None:
    memory = LongTermMemory(pool)
    memory.remember(ANA, _fact("wants to learn Rust", FactCategory.GOAL))
    memory.remember(
        ANA,
        NewFact(text="wants to learn Rust", category=FactCategory.GOAL, confidence=0.9,
                learned_at=T0 + 25 * DAY),
    )  # fmt: skip
    run_maintenance(admin, RetentionPolicy(), now=T0 + 40 * DAY)
    assert _live(pool, ANA) == {"wants to learn Rust"}


def test_dry_run_reports_without_changing_anything(
    pool: ConnectionPool[Any], admin: psycopg.Connection[Any]
) -> None:
    LongTermMemory(pool).ingest(ANA, [_fact("finish the thesis", FactCategory.GOAL)])
    report = run_maintenance(admin, RetentionPolicy(), now=T0 + 60 * DAY, dry_run=True)
    assert report.categories["goal"].expired == 1
    assert _live(pool, ANA) == {"finish the thesis"}


def test_near_duplicates_merge_into_the_most_confident_and_stay_in_history(
    pool: ConnectionPool[Any], admin: psycopg.Connection[Any]
) -> None:
    memory = LongTermMemory(pool)
    facts = [
        _fact("The user enjoys green tea", FactCategory.PREFERENCE, 0.7),
        _fact("enjoys green tea", FactCategory.PREFERENCE, 0.95),
        _fact("really enjoys green tea", FactCategory.PREFERENCE, 0.8),
        _fact("drinks green tea daily", FactCategory.PREFERENCE, 0.9),
        _fact("hates flying", FactCategory.PREFERENCE, 0.9),
    ]
    near = [1.0, 0.0, 0.0]
    vectors = [near, [0.99, 0.05, 0.0], [0.98, 0.0, 0.05], [0.99, 0.0, 0.05], [0.0, 1.0, 0.0]]
    memory.ingest(ANA, facts, vectors)
    memory.ingest(BO, [_fact("enjoys green tea", FactCategory.PREFERENCE, 0.7)], [near])

    report = run_maintenance(admin, RetentionPolicy(), now=T0 + DAY)

    assert report.categories["preference"].merged == 2
    assert _live(pool, ANA) == {"enjoys green tea", "drinks green tea daily", "hates flying"}, (
        "a close vector that says more (drinks, daily) is another fact"
    )
    assert _live(pool, BO) == {"enjoys green tea"}, "another user's twin is never merged"
    history = {f.text: f for f in memory.facts(ANA, include_superseded=True)}
    keeper = history["enjoys green tea"].id
    assert history["The user enjoys green tea"].superseded_by == keeper
    assert history["really enjoys green tea"].superseded_by == keeper
    counts = all_rows(pool, "SELECT text, reinforcement_count FROM facts WHERE user_id = 'ana'")
    assert {r["text"]: r["reinforcement_count"] for r in counts}["enjoys green tea"] == 2


def test_restore_refuses_bad_ids_and_live_facts(
    pool: ConnectionPool[Any], admin: psycopg.Connection[Any]
) -> None:
    LongTermMemory(pool).ingest(ANA, [_fact("prefers tea", FactCategory.PREFERENCE)])
    live = all_rows(pool, "SELECT id::text AS id FROM facts")[0]["id"]
    with pytest.raises(FactNotRestorableError, match="not a fact id"):
        restore_fact(admin, "42")
    with pytest.raises(FactNotRestorableError, match="not deleted"):
        restore_fact(admin, live)
    with pytest.raises(FactNotRestorableError, match="no fact"):
        restore_fact(admin, "00000000-0000-0000-0000-000000000000")


def test_policy_parses_overrides_and_rejects_nonsense() -> None:
    policy = RetentionPolicy.parse("goal=60, biographical=forever, recovery=7")
    assert policy.ttl_days["goal"] == 60
    assert policy.ttl_days["biographical"] is None
    assert policy.recovery_days == 7
    for bad in ("goal", "goal=soon", "colour=3", "recovery=-1"):
        with pytest.raises(ValueError, match="RECOLLECT_RETENTION"):
            RetentionPolicy.parse(bad)


def test_incognito_facts_stay_in_their_session_and_end_with_it(
    pool: ConnectionPool[Any], admin: psycopg.Connection[Any]
) -> None:
    memory = LongTermMemory(pool)
    incognito = Scope.for_session("acme", "ana", "s-1")
    memory.ingest(ANA, [_fact("prefers tea", FactCategory.PREFERENCE)])
    memory.ingest(incognito, [_fact("is planning a surprise party", FactCategory.GOAL)])
    memory.record_episode(incognito, NewEpisode(summary="talked about the party"))

    assert _live(pool, ANA) == {"prefers tea"}
    assert _live(pool, incognito) == {"prefers tea", "is planning a surprise party"}
    assert _live(pool, Scope.for_session("acme", "ana", "s-2")) == {"prefers tea"}

    assert end_session(pool, incognito) == {"facts": 1, "episodes": 1}
    assert _live(pool, incognito) == {"prefers tea"}
    assert all_rows(pool, "SELECT id FROM facts WHERE session_id IS NOT NULL") == []

    memory.ingest(Scope.for_session("acme", "ana", "s-3"), [_fact("x y", FactCategory.GOAL)])
    report = run_maintenance(admin, RetentionPolicy(), now=T0 + 2 * DAY)
    assert report.categories["goal"].purged == 1, "an unended session is purged by maintenance"
    with pytest.raises(ValueError, match="session scope"):
        end_session(pool, ANA)


def test_duplicates_merge_while_both_hold_even_when_a_plan_ends_them_later(
    pool: ConnectionPool[Any], admin: psycopg.Connection[Any]
) -> None:
    memory = LongTermMemory(pool)
    near = [[1.0, 0.0, 0.0], [0.99, 0.05, 0.0]]
    held = [_fact("lives in Lisbon", FactCategory.BIOGRAPHICAL, 0.9),
            _fact("The user lives in Lisbon", FactCategory.BIOGRAPHICAL, 0.7)]  # fmt: skip
    memory.ingest(ANA, held, near)
    memory.ingest(BO, held, near)
    for user, end in (("ana", T0 + 30 * DAY), ("bo", T0 + DAY / 2)):  # a plan's day
        admin.execute(
            'UPDATE facts SET valid_to = %s, metadata = metadata || \'{"replaced_by_plan": "x"}\''
            " WHERE user_id = %s",
            (end, user),
        )
    admin.commit()
    report = run_maintenance(admin, RetentionPolicy(duplicate_similarity=0.9), now=T0 + DAY)
    assert report.categories["biographical"].merged == 1, "ana's twins hold until day 30"
    history = {f.text: f for f in memory.facts(ANA, include_superseded=True)}
    assert history["The user lives in Lisbon"].superseded_by == history["lives in Lisbon"].id
    bo = {f.text: f for f in memory.facts(BO, include_superseded=True)}
    assert all(f.superseded_by is None for f in bo.values()), "ended on day 0.5: history"


def test_facts_about_different_subjects_are_never_merged(
    pool: ConnectionPool[Any], admin: psycopg.Connection[Any]
) -> None:
    memory = LongTermMemory(pool)
    editor = NewFact(text="prefers dark mode", category=FactCategory.PREFERENCE,
                     subject="editor_theme", learned_at=T0)  # fmt: skip
    terminal = editor.model_copy(update={"subject": "terminal_theme"})
    memory.ingest(ANA, [editor, terminal], [[1.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    report = run_maintenance(admin, RetentionPolicy(duplicate_similarity=0.5), now=T0 + DAY)
    assert report.categories["preference"].merged == 0
    assert len(memory.facts(ANA)) == 2


def test_memory_traces_are_kept_for_their_retention_then_deleted(
    pool: ConnectionPool[Any], admin: psycopg.Connection[Any]
) -> None:
    write_turns(pool, [PendingTrace(ANA, "t-1", {"prompt": {}}), PendingTrace(BO, "t-2", {})])
    admin.execute("UPDATE memory_traces SET created_at = %s WHERE thread_id = 't-1'", (T0,))
    admin.execute(
        "UPDATE memory_traces SET created_at = %s WHERE thread_id = 't-2'", (T0 + 25 * DAY,)
    )
    admin.commit()
    dry = run_maintenance(admin, RetentionPolicy(), now=T0 + 31 * DAY, dry_run=True)
    assert dry.traces_purged == 1
    assert _traces(admin) == 2
    report = run_maintenance(admin, RetentionPolicy.parse("traces=7"), now=T0 + 33 * DAY)
    assert report.traces_purged == 2
    assert _traces(admin) == 0
    assert RetentionPolicy.parse("traces=7").trace_days == 7
    with pytest.raises(ValueError, match="RECOLLECT_RETENTION"):
        RetentionPolicy.parse("traces=-1")


def _traces(admin: psycopg.Connection[Any]) -> int:
    row = admin.execute("SELECT count(*) AS n FROM memory_traces").fetchone()
    assert row is not None
    return int(row["n"])
