"""A plan starts on its day: until then the fact it replaces holds, after it the plan does.

The clock is fixed: facts are learned at set moments and recall is asked at set moments
(`now=`, `as_of=`), or the application's clock is moved (`RECOLLECT_CLOCK_OFFSET`), so no test
waits for a day to come.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from psycopg_pool import ConnectionPool

from recollect.basestore.store import RecollectStore
from recollect.extraction.fact_writer import EngineWriter
from recollect.longterm.facts import LongTermMemory
from recollect.longterm.records import FactCategory, NewFact, ProfileEntry, RememberAction
from recollect.prebuilt.recall import as_items
from recollect.privacy.export import export_user
from recollect.store import clock
from recollect.store.scope import Scope
from recollect.store.tenancy import scoped
from tests.support.memory import memory_over

ANA = Scope.for_user("acme", "ana")
T0 = datetime(2026, 1, 1, 9, tzinfo=UTC)
DAY = timedelta(days=1)
OSLO_DAY = datetime(2026, 2, 1, tzinfo=UTC)
""""Next month", said in January."""
QUERY = "where does the user live Stockholm Oslo"


def said(text: str, days: float) -> NewFact:
    return NewFact(text=text, category=FactCategory.BIOGRAPHICAL, learned_at=T0 + days * DAY)


def _recalled(memory: LongTermMemory, **when: datetime) -> list[str]:
    found = memory.recall(ANA, QUERY, repeat_profile=True, **when)
    return [r.fact.text for r in found.facts]


def _location(memory: LongTermMemory, at: datetime) -> str:
    return " ".join(memory.profile_at(ANA, at).values("location"))


def test_a_dated_plan_takes_over_on_its_day(pool: ConnectionPool[Any]) -> None:
    memory = memory_over(pool, None)
    writer = EngineWriter(memory)
    with scoped(pool, ANA) as conn:
        writer.remember(conn, ANA, said("I live in Stockholm", 0))
        writer.remember(conn, ANA, said("Next month I'm moving to Oslo", 10))
    plan = writer.last
    assert plan is not None
    assert plan.action is RememberAction.INSERTED
    assert plan.replaced == (), "nothing ends yet"
    assert plan.fact.valid_from == OSLO_DAY
    assert plan.fact.planned
    assert plan.fact.metadata["plan"] is True
    history = {f.text: f for f in memory.facts(ANA, include_superseded=True)}
    assert history["I live in Stockholm"].valid_to == OSLO_DAY, "it holds until the plan's day"
    with scoped(pool, ANA) as conn:
        starts = conn.execute("SELECT text, valid_from FROM facts ORDER BY learned_at").fetchall()
    assert [(r["text"], r["valid_from"]) for r in starts] == [
        ("I live in Stockholm", T0),  # filled from learned_at when the insert names none
        ("Next month I'm moving to Oslo", OSLO_DAY),
    ]

    before = T0 + 20 * DAY
    shown = [item["text"] for item in as_items(memory.recall(ANA, QUERY, now=before))]
    assert "Next month I'm moving to Oslo (from 2026-02-01)" in shown, "recalled as a plan"
    assert set(_recalled(memory, now=before)) == {
        "I live in Stockholm",
        "Next month I'm moving to Oslo",
    }
    assert _recalled(memory, as_of=before) == ["I live in Stockholm"]
    assert memory.profile(ANA, now=before).values("location") == ["I live in Stockholm"]
    assert "Stockholm" in _location(memory, before)

    after = OSLO_DAY + DAY
    assert _recalled(memory, now=after) == ["Next month I'm moving to Oslo"]
    assert _recalled(memory, as_of=after) == ["Next month I'm moving to Oslo"]
    assert "Oslo" in _location(memory, after)
    assert "Stockholm" not in _location(memory, after)
    assert memory.profile(ANA, now=after).values("location") == ["Next month I'm moving to Oslo"], (
        "the stored document, read after the day"
    )


def test_a_plan_without_a_day_is_kept_beside_and_ends_nothing(pool: ConnectionPool[Any]) -> None:
    memory = memory_over(pool, None)
    memory.remember(ANA, said("I live in Stockholm", 0))
    plan = memory.remember(ANA, said("I'm going to move to Oslo someday", 10))
    assert plan.fact.metadata["plan"] is True
    assert plan.fact.valid_from == plan.fact.learned_at
    history = {f.text: f for f in memory.facts(ANA, include_superseded=True)}
    assert history["I live in Stockholm"].valid_to is None
    assert "I live in Stockholm" in _recalled(memory, now=T0 + 400 * DAY)


def test_a_plan_ends_on_its_day_what_the_extractor_says_it_replaces(
    pool: ConnectionPool[Any],
) -> None:
    memory = memory_over(pool, None)
    vim = memory.remember(
        ANA, NewFact(text="Uses Vim", category=FactCategory.TECHNICAL_STACK, learned_at=T0)
    )
    plan = memory.remember(
        ANA,
        NewFact(
            text="Will switch to Helix next month",
            category=FactCategory.TECHNICAL_STACK,
            learned_at=T0 + 10 * DAY,
            replaces=(vim.fact.id,),
        ),
    )
    assert plan.fact.valid_from == OSLO_DAY
    history = {f.text: f for f in memory.facts(ANA, include_superseded=True)}
    assert history["Uses Vim"].valid_to == OSLO_DAY
    assert history["Uses Vim"].superseded_by is None, "still current until the day"


def test_an_export_shows_the_fact_a_plan_replaces_live_until_the_day(
    pool: ConnectionPool[Any],
) -> None:
    memory = memory_over(pool, None)
    today = datetime.now(UTC)
    memory.remember(ANA, NewFact(text="I live in Stockholm", category="biographical",
                                 learned_at=today - DAY))  # fmt: skip
    memory.remember(ANA, NewFact(text="Next month I'm moving to Oslo", category="biographical",
                                 learned_at=today))  # fmt: skip
    statuses = {f["text"]: f["status"] for f in export_user(pool, ANA)["facts"]}
    assert statuses == {"I live in Stockholm": "live", "Next month I'm moving to Oslo": "live"}


def test_the_profile_recall_and_listing_turn_over_when_the_clock_reaches_the_day(
    pool: ConnectionPool[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = memory_over(pool, None)
    writer = EngineWriter(memory)
    store = RecollectStore(memory)
    with scoped(pool, ANA) as conn:  # both said today, by the application's clock
        writer.remember(conn, ANA, NewFact(text="I live in Stockholm", category="biographical"))
        writer.remember(
            conn, ANA, NewFact(text="Next month I'm moving to Oslo", category="biographical")
        )

    def seen() -> tuple[tuple[str, str, str], set[str], set[str]]:
        """The home as the profile, recall's profile and the store's item say it; the facts
        recall finds; the facts listed as live."""
        recalled = memory.recall(ANA, QUERY, repeat_profile=True)
        item = store.get(("acme", "ana", "profile"), "location")
        homes = (
            " ".join(memory.profile(ANA).values("location")),
            " ".join(e.value for e in recalled.profile if e.key == "location"),
            "" if item is None else str(item.value["value"]),
        )
        return homes, {r.fact.text for r in recalled.facts}, {f.text for f in memory.facts(ANA)}

    homes, recalled, listed = seen()
    assert homes == ("I live in Stockholm",) * 3
    assert recalled == {"I live in Stockholm", "Next month I'm moving to Oslo"}, "and the plan"
    assert listed == recalled

    monkeypatch.setenv(clock.CLOCK_OFFSET_ENV, "62d")  # past the first of next month; no write
    homes, recalled, listed = seen()
    assert homes == ("Next month I'm moving to Oslo",) * 3
    assert recalled == {"Next month I'm moving to Oslo"}, "the plan holds, the old home ended"
    assert listed == recalled


def test_a_value_set_after_the_plans_day_outlives_the_plan(
    pool: ConnectionPool[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = memory_over(pool, None)
    writer = EngineWriter(memory)
    with scoped(pool, ANA) as conn:
        writer.remember(conn, ANA, NewFact(text="I live in Stockholm", category="biographical"))
        writer.remember(
            conn, ANA, NewFact(text="Next month I'm moving to Oslo", category="biographical")
        )
    monkeypatch.setenv(clock.CLOCK_OFFSET_ENV, "62d")
    memory.set_profile(ANA, [ProfileEntry(key="location", value="Bergen")])
    assert memory.profile(ANA).values("location") == ["Bergen"]
    monkeypatch.setenv(clock.CLOCK_OFFSET_ENV, "20d")  # before the day, as the document was
    assert memory.profile(ANA).values("location") == ["Bergen"], "set by hand, kept by hand"


def test_a_fact_written_without_a_start_starts_when_it_was_learned(
    pool: ConnectionPool[Any],
) -> None:
    """An import writes each fact's start itself; any other insert without one gets it from
    the trigger, which runs only for such rows (`schema.valid_from_when_missing`)."""
    memory = memory_over(pool, None)
    memory.ingest(ANA, [said("I collect stamps", 1), said("I play chess", 2)])
    memory.remember(ANA, said("I live in Stockholm", 3))
    with scoped(pool, ANA) as conn:
        conn.execute(
            "INSERT INTO facts (org_id, user_id, category, text, confidence, learned_at,"
            " last_reinforced_at) VALUES ('acme', 'ana', 'preference', 'I like tea', 0.9,"
            " %(at)s, %(at)s)",
            {"at": T0 + 4 * DAY},
        )
        starts = conn.execute("SELECT text, valid_from, learned_at FROM facts").fetchall()
    assert len(starts) == 4
    assert all(r["valid_from"] == r["learned_at"] for r in starts), starts
