"""Behind a real PgBouncer in transaction mode, with prepared statements off: decisions are
accepted as on a direct connection, two users' interleaved served turns see only their own
rows, and two owners' migrations started at once both finish and leave no lock behind.

Each server connection serves whichever client's transaction comes next, so anything that
outlives a transaction (a session-level lock, a prepared statement, a session setting) lands
on another client. Skipped without the `pgbouncer` program (`RECOLLECT_REQUIRE_PGBOUNCER=1`
turns the skip into a failure).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import psycopg
import pytest
from psycopg_pool import ConnectionPool

from graphs.agent import make_graph
from graphs.approvals import Approvals
from recollect import thread_config, user_turn
from recollect.approvals.errors import DecisionRefusedError
from recollect.longterm.configured import configured_memory
from recollect.longterm.records import FactCategory, NewFact
from recollect.state.context import Context
from recollect.store import migrations
from recollect.store.acting import acting_as
from recollect.store.pool import use_pool
from recollect.store.roles import app_uri
from recollect.store.scope import Scope
from recollect.store.server import open_pool, with_database
from recollect.store.tenancy import scoped
from tests.support import clusters
from tests.support.pgbouncer import Pooler, pgbouncer
from tests.support.scripted_openai import ScriptedOpenAI
from tests.support.served_saver import served_saver

DECISIONS = 10
USERS = {
    Scope.for_user("acme", "ana"): "Ana keeps a lemon tree called Zest on her balcony.",
    Scope.for_user("acme", "ben"): "Ben keeps a bonsai tree called Twig on his desk.",
}
"""Each user's fact, which recall finds for the question both ask."""
QUESTION = "what tree do I keep, and what is it called?"
TURNS = 4
HELD_ADVISORY_LOCKS = "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory'"


@pytest.fixture(scope="module")
def pooler(postgres_server: str) -> Iterator[Pooler]:
    with pgbouncer(postgres_server) as running:
        yield running


@pytest.fixture(autouse=True)
def unprepared(monkeypatch: pytest.MonkeyPatch) -> None:
    """PgBouncer 1.18 (Debian 12's) cannot keep prepared statements."""
    monkeypatch.setenv("RECOLLECT_PREPARED_STATEMENTS", "off")


def _decide_each(pool: ConnectionPool[Any], orders: str) -> list[str]:
    """Ten workflows, each decided and then decided again; what each attempt got."""
    outcomes: list[str] = []
    with use_pool(pool):
        approvals = Approvals(pool)
        for i in range(DECISIONS):
            view = approvals.request(
                org_id="acme",
                user_id="dana",
                order_id=f"{orders}-{i}",
                amount="10.00",
                reason="broken",
            )
            for attempt in ("first", "again"):
                try:
                    if i % 2:
                        approvals.reject(view.id, org_id="acme", by="maria", reason="no receipt")
                    else:
                        approvals.approve(view.id, org_id="acme", by="maria")
                    outcomes.append(f"{attempt}: accepted")
                except DecisionRefusedError as exc:
                    refused = "decided before" if "decision is made once" in str(exc) else str(exc)
                    outcomes.append(f"{attempt}: refused, {refused}")
    return outcomes


def _held_advisory_locks(database_uri: str) -> int:
    with psycopg.connect(database_uri, autocommit=True) as conn:
        row = conn.execute(HELD_ADVISORY_LOCKS).fetchone()
    assert row is not None
    return int(row[0])


def test_decisions_through_the_pooler_are_accepted_as_on_a_direct_connection(
    pooler: Pooler, database_uri: str
) -> None:
    direct = open_pool(app_uri(database_uri), max_size=4, name="direct")
    try:
        expected = _decide_each(direct, "direct")
    finally:
        direct.close()
    pooled = open_pool(pooler.uri(app_uri(database_uri)), max_size=4, name="pooled")
    try:
        outcomes = _decide_each(pooled, "pooled")
    finally:
        pooled.close()
    accepted = sum(o == "first: accepted" for o in outcomes)
    alike = sum(got == want for got, want in zip(outcomes, expected, strict=True))
    print(
        f"  {pooler.version}: {accepted}/{DECISIONS} decisions accepted, "
        f"{alike}/{len(expected)} attempts answered as on a direct connection"
    )
    assert expected == ["first: accepted", "again: refused, decided before"] * DECISIONS
    assert outcomes == expected
    assert _held_advisory_locks(database_uri) == 0, "a decision left its lock behind"


def test_two_users_interleaved_served_turns_see_no_foreign_rows(
    pooler: Pooler, database_uri: str, scripted_llm: ScriptedOpenAI
) -> None:
    pooled_admin = pooler.uri(database_uri)
    pool = open_pool(app_uri(pooled_admin), max_size=4, name="pooled")
    try:
        memory = configured_memory(pool)
        for scope, fact in USERS.items():
            memory.remember(scope, NewFact(text=fact, category=FactCategory.PREFERENCE))
        recalled = asyncio.run(_interleaved_turns(pooled_admin, memory))
        stored = {scope: _facts_seen(pool, scope) for scope in USERS}
    finally:
        pool.close()
    foreign = [
        f"{scope.user_id} saw {text!r}"
        for scope, texts in [*recalled.items(), *stored.items()]
        for text in texts
        if any(text == fact for other, fact in USERS.items() if other != scope)
    ]
    own = {scope: sum(USERS[scope] in text for text in recalled[scope]) for scope in USERS}
    print(f"  {TURNS} turns each for {len(USERS)} users: {len(foreign)} foreign rows seen")
    assert foreign == []
    assert all(count == TURNS for count in own.values()), own


async def _interleaved_turns(pooled_admin: str, memory: Any) -> dict[Scope, list[str]]:
    """Both users' turns at once on one loop, over one pool of pooled connections."""
    recalled: dict[Scope, list[str]] = {scope: [] for scope in USERS}
    async with served_saver(pooled_admin, next(iter(USERS))) as saver:
        served = make_graph(checkpointer=saver, memory=memory)

        async def user(scope: Scope) -> None:
            with acting_as(scope):
                ctx = Context(org_id=scope.org_id, user_id=scope.user_id)
                for turn in range(TURNS):
                    result = await served.ainvoke(
                        user_turn(f"{QUESTION} ({turn})"),
                        thread_config(f"{scope.user_id}-chat"),
                        context=ctx,
                    )
                    recalled[scope] += [item["text"] for item in result["recalled"]]
                    await asyncio.sleep(0)

        await asyncio.gather(*(user(scope) for scope in USERS))
    return recalled


def _facts_seen(pool: ConnectionPool[Any], scope: Scope) -> list[str]:
    """Every fact row the user's scope can read, unfiltered (row-level security decides)."""
    with scoped(pool, scope) as conn:
        return [row["text"] for row in conn.execute("SELECT text FROM facts").fetchall()]


def test_two_migrations_at_once_through_the_pooler_both_finish(
    pooler: Pooler, postgres_server: str
) -> None:
    name = f"pooled_migrations_{threading.get_ident()}"
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    owner = clusters.owned_database(postgres_server, name, clusters.MIGRATING_OWNER)
    start = threading.Barrier(2)

    def migrate_at_once() -> int:
        start.wait()
        return migrations.migrate(pooler.uri(owner))

    try:
        with ThreadPoolExecutor(max_workers=2) as both:
            started = [both.submit(migrate_at_once) for _ in range(2)]
            crashes = [repr(f.exception()) for f in started if f.exception() is not None]
        print(f"  two migrations at once through the pooler: {len(crashes)} crashed")
        assert crashes == []
        assert [f.result() for f in started] == [migrations.latest_version()] * 2
        held = _held_advisory_locks(with_database(postgres_server, name))
        assert held == 0, "a migration left its lock behind"
        assert migrations.migrate(owner) == migrations.latest_version()
    finally:
        with psycopg.connect(postgres_server, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
