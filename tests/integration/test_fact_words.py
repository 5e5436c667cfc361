"""A large user's words are listed in `fact_words` once they have `WORDED_FROM` facts, and the
lexical read that looks them up finds exactly what the covering index finds, for that user only."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
from psycopg import Connection
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from recollect.longterm import fact_sql
from recollect.longterm.facts import LongTermMemory, scope_params
from recollect.longterm.records import FactCategory, NewFact
from recollect.privacy.forget import forget_user
from recollect.privacy.lifecycle import RetentionPolicy, run_maintenance
from recollect.store.schema.fact_words import TENANT_LEXEME_MARK, WORDED_FROM
from recollect.store.scope import Scope, ScopeKind
from recollect.store.server import CONNECTION_KWARGS
from recollect.store.tenancy import SET_SCOPE, scope_settings
from tests.support.db import all_rows, superuser_conninfo
from tests.support.generic_plans import explain_generic
from tests.support.moves import move_from_lisbon_to_porto
from tests.support.word_facts import WORDS, WORDS_A_FACT, unit_vector

ANA = Scope.for_user("acme", "ana")
BO = Scope.for_user("acme", "bo")
DIM = 16
DAY = timedelta(days=1)
LEXICAL = fact_sql.LEXICAL[ScopeKind.USER]


def _fill(pool: ConnectionPool[Any], scope: Scope, start: int, count: int) -> None:
    """`count` look-alike facts by COPY, numbered from `start` so each has a word of its own."""
    rng = random.Random(start)
    facts = [
        NewFact(text=" ".join(rng.choices(WORDS, k=WORDS_A_FACT)) + f" {i}",
                category=FactCategory.EVENT, confidence=0.8)
        for i in range(start, start + count)
    ]  # fmt: skip
    vectors = [unit_vector(rng, DIM) for _ in facts]
    LongTermMemory(pool).ingest(scope, facts, embeddings=vectors)


def _listed(pool: ConnectionPool[Any], scope: Scope) -> bool:
    rows = all_rows(
        pool,
        "SELECT count(*) AS n FROM worded_scopes WHERE org_id = %s AND user_id = %s",
        scope.org_id,
        scope.user_id,
    )
    return bool(rows[0]["n"])


def _postings(
    pool: ConnectionPool[Any], scope: Scope
) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """The (fact, word) pairs the user's facts hold, and those `fact_words` lists for them."""
    user = (scope.org_id, scope.user_id)
    held = all_rows(
        pool,
        "SELECT f.id, word FROM facts AS f, unnest(tsvector_to_array(f.search)) AS word"
        " WHERE f.org_id = %s AND f.user_id = %s AND f.session_id IS NULL"
        " AND left(word, 1) <> %s",
        *user,
        TENANT_LEXEME_MARK,
    )
    listed = all_rows(
        pool, "SELECT fact_id, lexeme FROM fact_words WHERE org_id = %s AND user_id = %s", *user
    )
    return (
        {(str(r["id"]), r["word"]) for r in held},
        {(str(r["fact_id"]), r["lexeme"]) for r in listed},
    )


@contextmanager
def _rolled_back(pool: ConnectionPool[Any], scope: Scope) -> Iterator[Connection[Any]]:
    """An app-role transaction in `scope` that leaves nothing behind."""
    with pool.connection() as conn, conn.transaction(force_rollback=True):
        conn.execute(SET_SCOPE, scope_settings(scope))
        yield conn


def _params(scope: Scope, query: str) -> dict[str, Any]:
    return {**scope_params(scope), "query": query, "lexical_limit": 30,
            "now": datetime.now(UTC)}  # fmt: skip


def _lexical(
    pool: ConnectionPool[Any],
    scope: Scope,
    query: str,
    *,
    covering: bool = False,
    params_of: Scope | None = None,
) -> list[tuple[str, str, float]]:
    """Recall's lexical candidates as recall reads them (prepared, generic plan); `covering`:
    with the user's listing hidden, so the covering index answers; `params_of`: whose ids the
    statement names, if not the scope's."""
    with _rolled_back(pool, scope) as conn:
        if covering:
            conn.execute(
                "DELETE FROM worded_scopes WHERE org_id = %s AND user_id = %s",
                (scope.org_id, scope.user_id),
            )
        conn.execute(fact_sql.GENERIC_PLANS)
        rows = conn.execute(LEXICAL, _params(params_of or scope, query), prepare=True).fetchall()
    return [(r["kind"], r["id"], r["lexical_score"]) for r in rows]


def test_a_user_is_listed_from_worded_from_facts_with_every_word(
    pool: ConnectionPool[Any],
) -> None:
    _fill(pool, ANA, 0, WORDED_FROM - 1)
    assert not _listed(pool, ANA)
    assert all_rows(pool, "SELECT count(*) AS n FROM fact_words")[0]["n"] == 0
    _fill(pool, ANA, WORDED_FROM - 1, 1)
    assert _listed(pool, ANA)
    held, listed = _postings(pool, ANA)
    assert len({fact for fact, _ in held}) == WORDED_FROM
    assert held == listed
    assert all_rows(pool, "SELECT count(*) AS n FROM fact_words")[0]["n"] == len(listed)


QUERIES = (
    "tea",
    "violin lessons by the harbour",
    "517",
    "what is it that you were",
    "zeppelin",
)
"""Words in many facts, a word of one fact, stop words only, and a word no fact has."""


def test_a_listed_users_lexical_read_finds_what_the_covering_index_finds(
    pool: ConnectionPool[Any],
) -> None:
    memory = LongTermMemory(pool)
    _fill(pool, ANA, 0, WORDED_FROM)
    assert _listed(pool, ANA)
    for query in QUERIES:
        assert _lexical(pool, ANA, query) == _lexical(pool, ANA, query, covering=True), query
    assert len(_lexical(pool, ANA, "tea")) == 30
    assert len(_lexical(pool, ANA, "517")) == 1
    assert _lexical(pool, ANA, "what is it that you were") == []

    added = memory.remember(
        ANA, NewFact(text="Ana collects quokka figurines", category=FactCategory.PREFERENCE)
    )
    assert [r[1] for r in _lexical(pool, ANA, "quokka")] == [added.fact.id]
    gone = next(f for f in memory.facts(ANA) if f.text.endswith(" 517"))
    assert memory.forget(ANA, gone.id)
    assert _lexical(pool, ANA, "517") == []
    _, moved = move_from_lisbon_to_porto(memory, ANA)
    assert _lexical(pool, ANA, "Lisbon") == []
    assert [r[1] for r in _lexical(pool, ANA, "Porto")] == [moved.id]
    held, listed = _postings(pool, ANA)
    assert held == listed
    for query in (*QUERIES, "quokka", "Lisbon", "Ana lives"):
        assert _lexical(pool, ANA, query) == _lexical(pool, ANA, query, covering=True), query


def test_postings_are_seen_by_their_user_alone(pool: ConnectionPool[Any]) -> None:
    _fill(pool, ANA, 0, WORDED_FROM)
    _fill(pool, BO, 0, 5)
    bo_facts = {f.id for f in LongTermMemory(pool).facts(BO)}
    for other in (BO, Scope.for_user("globex", "ana")):
        with _rolled_back(pool, other) as conn:
            for table in ("fact_words", "worded_scopes"):
                assert conn.execute(f"SELECT count(*) AS n FROM {table}").fetchall()[0]["n"] == 0
    found = _lexical(pool, BO, "tea garden violin harbour ledger summit orchid lantern 0 1 2")
    assert found
    assert {r[1] for r in found} <= bo_facts
    assert _lexical(pool, BO, "tea 517", params_of=ANA) == []


def test_erasure_removes_the_users_postings_and_only_theirs(
    pool: ConnectionPool[Any], worker_pool: ConnectionPool[Any]
) -> None:
    _fill(pool, ANA, 0, WORDED_FROM)
    _fill(pool, BO, 0, WORDED_FROM)
    bo_before = _postings(pool, BO)
    assert _listed(pool, ANA)
    assert _listed(pool, BO)
    forget_user(worker_pool, ANA)
    for table in ("fact_words", "worded_scopes"):
        rows = all_rows(pool, f"SELECT DISTINCT user_id FROM {table}")
        assert [r["user_id"] for r in rows] == ["bo"], table
    assert _postings(pool, BO) == bo_before


def test_a_deleted_fact_takes_its_postings_on_every_path_that_deletes_one(
    pool: ConnectionPool[Any], database_uri: str
) -> None:
    _fill(pool, ANA, 0, WORDED_FROM)
    _fill(pool, BO, 0, WORDED_FROM)
    bo_before = _postings(pool, BO)
    memory = LongTermMemory(pool)
    deleted, purged = (fact.id for fact in memory.facts(ANA)[:2])
    with pool.connection() as conn, conn.transaction():  # the app role, behind the policies
        conn.execute(SET_SCOPE, scope_settings(ANA))
        conn.execute("DELETE FROM facts WHERE id = %s", (deleted,))
    assert memory.forget(ANA, purged)
    with psycopg.connect(database_uri, **CONNECTION_KWARGS) as admin:  # retention's purge
        run_maintenance(admin, RetentionPolicy(recovery_days=0), now=datetime.now(UTC) + DAY)
    held, listed = _postings(pool, ANA)
    assert len({fact for fact, _ in held}) == WORDED_FROM - 2
    assert listed == held
    assert _postings(pool, BO) == bo_before


def test_emptying_the_facts_empties_the_word_list_and_its_marks(pool: ConnectionPool[Any]) -> None:
    _fill(pool, ANA, 0, WORDED_FROM)
    assert _listed(pool, ANA)
    with psycopg.connect(superuser_conninfo(pool), **CONNECTION_KWARGS) as conn:
        conn.execute("TRUNCATE facts CASCADE")
    for table in ("fact_words", "worded_scopes"):
        assert all_rows(pool, f"SELECT count(*) AS n FROM {table}")[0]["n"] == 0, table


WAITING_ON = """
SELECT count(*) AS n FROM pg_locks AS waiting JOIN pg_locks AS held
  USING (locktype, database, classid, objid, objsubid)
WHERE waiting.locktype = 'advisory' AND NOT waiting.granted
  AND held.granted AND held.pid = %s
"""
"""Whether some backend waits for an advisory lock that `pid` holds."""


def test_an_uncommitted_insert_holds_back_the_backfill_until_it_commits(
    pool: ConnectionPool[Any],
) -> None:
    _fill(pool, ANA, 0, WORDED_FROM - 10)
    first_ids: list[str] = []
    with (
        ThreadPoolExecutor(1) as runner,  # exits last: the second insert ends after the commit
        psycopg.connect(superuser_conninfo(pool), **CONNECTION_KWARGS) as watcher,
        pool.connection() as first,
        first.transaction(),
    ):
        first.execute(SET_SCOPE, scope_settings(ANA))
        for text in ("Ana keeps bees on the roof", "Ana rows at dawn", "Ana reads Pessoa"):
            row = first.execute(
                fact_sql.INSERT_FACT,
                {**scope_params(ANA), "category": FactCategory.PREFERENCE, "subject": None,
                 "text": text, "confidence": 0.8, "source_ids": [],
                 "learned_at": datetime.now(UTC), "superseded_by": None, "valid_from": None,
                 "valid_to": None, "vector": None, "metadata": Jsonb({})},
            ).fetchall()  # fmt: skip
            first_ids.append(row[0]["id"])
        second = runner.submit(_fill, pool, ANA, WORDED_FROM, 20)
        deadline = time.monotonic() + 60
        waiting = False
        while not waiting and not second.done() and time.monotonic() < deadline:
            waiting = bool(
                watcher.execute(WAITING_ON, (first.info.backend_pid,)).fetchall()[0]["n"]
            )
            time.sleep(0.02)
        assert waiting, "the second insert did not wait for the first's lock"
        assert not second.done()
    second.result(timeout=60)
    assert _listed(pool, ANA)
    held, listed = _postings(pool, ANA)
    assert len({fact for fact, _ in held}) == WORDED_FROM + 13
    assert held == listed
    assert set(first_ids) <= {fact for fact, _ in listed}


def _explain(pool: ConnectionPool[Any], scope: Scope, options: str) -> str:
    """EXPLAIN of recall's lexical statement as the app role in `scope`, on its generic plan."""
    with _rolled_back(pool, scope) as conn:
        return explain_generic(
            conn, LEXICAL, _params(scope, "violin lessons by the harbour"), options
        )


ANALYZED = "(ANALYZE, COSTS OFF, TIMING OFF)"
NEVER = "(never executed)"


def _lines(plan: str, node: str) -> list[str]:
    return [line for line in plan.splitlines() if node in line]


def test_a_listed_users_words_are_read_from_the_postings_index(
    pool: ConnectionPool[Any],
) -> None:
    _fill(pool, ANA, 0, WORDED_FROM)
    _fill(pool, BO, 0, 5)
    with psycopg.connect(superuser_conninfo(pool), autocommit=True) as owner:
        owner.execute("ANALYZE facts, fact_words, worded_scopes")  # whatever autovacuum did
    plan = _explain(pool, ANA, "")
    assert "fact_words_pkey" in plan, plan
    assert "Seq Scan on fact_words" not in plan, plan
    listed = _explain(pool, ANA, ANALYZED)
    assert _lines(listed, "facts_live_words"), listed
    assert all(NEVER in line for line in _lines(listed, "facts_live_words")), listed
    assert not any(NEVER in line for line in _lines(listed, "on fact_words")), listed
    unlisted = _explain(pool, BO, ANALYZED)
    assert all(NEVER in line for line in _lines(unlisted, "on fact_words")), unlisted
    assert not any(NEVER in line for line in _lines(unlisted, "facts_live_words")), unlisted
