"""A scope read by its codes is, once its process knows the id that splits it, read in two
ranges of ids on two connections: recall finds what the whole read finds, on either side of
the split, with or without a spare connection, synchronous or served."""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime
from typing import Any

import pytest
from psycopg_pool import ConnectionPool

from recollect.longterm import fact_sql
from recollect.longterm.facts import LongTermMemory
from recollect.longterm.recall import fetch, finish, plan_recall, reads, recall
from recollect.longterm.recipe import RecallRecipe
from recollect.longterm.records import NewEpisode, Recollection
from recollect.longterm.scope_sizes import ScopeSizes
from recollect.store.scope import Scope
from recollect.store.tenancy import scoped
from tests.support.db import all_rows
from tests.support.served_fetch import served_fetch
from tests.support.word_facts import ingest_word_facts

HOARDER = Scope.for_user("acme", "hoarder")
DIM = 16
FACTS = 1_000
SPLIT_PAST = 500
"""`fact_sql.EXACT_UP_TO` for the tests that compare a split read with the whole one: a
1,000-fact scope is then read by its codes, and each range of it (600 and 400 facts) is
smaller than what it scores at full precision (`fact_sql._part_rescored`), as the whole read's
1,000 are, so the two reads must agree fact for fact."""
QUERY = "violin lessons by the harbour"
Found = list[tuple[str, float | None, float | None]]


def _recall(
    pool: ConnectionPool[Any],
    vector: list[float],
    sizes: ScopeSizes | None,
    scope: Scope = HOARDER,
) -> Recollection:
    return recall(pool, scope, QUERY, recipe=RecallRecipe(k=20), embedder=None,
                  now=datetime.now(UTC), query_embedding=vector, sizes=sizes)  # fmt: skip


def _found(found: Recollection) -> Found:
    """What recall found and why: each fact and episode with its similarity and lexical score."""
    facts = [(f.fact.id, f.similarity, f.lexical) for f in found.facts]
    return facts + [(e.id, e.similarity, e.lexical) for e in found.episodes]


def _whole(pool: ConnectionPool[Any], vector: list[float], scope: Scope = HOARDER) -> Recollection:
    """The whole codes' read of the scope: its size known, the id that splits it not yet."""
    sizes = ScopeSizes()
    sizes.counted(scope, DIM, FACTS)
    return _recall(pool, vector, sizes, scope)


def _ids(pool: ConnectionPool[Any]) -> list[str]:
    """The scope's fact ids in the order of the covering indexes."""
    rows = all_rows(pool, "SELECT id FROM facts WHERE user_id = %s ORDER BY id", HOARDER.owner_id)
    return [str(r["id"]) for r in rows]


def _number(pool: ConnectionPool[Any], fact_id: str) -> int:
    """Which of `ingest_word_facts`'s facts this is (its text ends with the number)."""
    rows = all_rows(pool, "SELECT text FROM facts WHERE id = %s", fact_id)
    return int(str(rows[0]["text"]).split()[-1])


def _split(pool: ConnectionPool[Any], vectors: list[list[float]], sizes: ScopeSizes) -> str:
    """The id that splits the scope, as two recalls find it: the first counts the scope up to
    the exact read's limit, the second reads it whole and finds the split beside."""
    _recall(pool, vectors[0], sizes)
    assert sizes.split_id(HOARDER, DIM) is None
    _recall(pool, vectors[0], sizes)
    assert sizes.known(HOARDER, DIM) == len(vectors)
    split_id = sizes.split_id(HOARDER, DIM)
    assert split_id is not None
    return split_id


def test_a_scope_read_in_two_ranges_finds_what_the_whole_read_finds(
    pool: ConnectionPool[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fact_sql, "EXACT_UP_TO", SPLIT_PAST)
    vectors = ingest_word_facts(LongTermMemory(pool), HOARDER, FACTS, random.Random(19), DIM)
    ids = _ids(pool)
    sizes = ScopeSizes()
    split_id = _split(pool, vectors, sizes)
    split_at = ids.index(split_id)
    assert split_at == math.floor(FACTS * fact_sql.LOWER_SHARE)
    plan = plan_recall(HOARDER, QUERY, recipe=RecallRecipe(k=20), embedder=None,
                       now=datetime.now(UTC), query_embedding=vectors[0], sizes=sizes)  # fmt: skip
    assert plan.splits
    assert plan.fans_out
    for index in (0, split_at - 1, split_at, FACTS - 1):  # both ends, both sides of the split
        number = _number(pool, ids[index])
        with pool.connection(), pool.connection():
            pass  # two connections open and idle
        before = pool.get_stats()
        split = _recall(pool, vectors[number], sizes)
        after = pool.get_stats()
        assert after["requests_num"] - before["requests_num"] == 2, "a second connection was asked"
        assert _found(split) == _found(_whole(pool, vectors[number]))
        nearest = max(split.facts, key=lambda f: f.similarity or 0.0)
        assert nearest.fact.id == ids[index]


def test_a_scope_past_the_exact_limit_finds_its_nearest_on_either_side_of_the_split(
    pool: ConnectionPool[Any],
) -> None:
    count = fact_sql.EXACT_UP_TO + 50
    vectors = ingest_word_facts(LongTermMemory(pool), HOARDER, count, random.Random(29), DIM)
    ids = _ids(pool)
    sizes = ScopeSizes()
    split_at = ids.index(_split(pool, vectors, sizes))
    for index in (7, split_at - 1, split_at, count - 1):
        found = _recall(pool, vectors[_number(pool, ids[index])], sizes)
        nearest = max(found.facts, key=lambda f: f.similarity or 0.0)
        assert nearest.fact.id == ids[index]
        assert nearest.similarity is not None
        assert nearest.similarity > 0.999


def test_a_split_read_on_one_connection_or_served_finds_the_same(
    pool: ConnectionPool[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fact_sql, "EXACT_UP_TO", SPLIT_PAST)
    vectors = ingest_word_facts(LongTermMemory(pool), HOARDER, FACTS, random.Random(23), DIM)
    ids = _ids(pool)
    sizes = ScopeSizes()
    sizes.counted(HOARDER, DIM, FACTS, ids[560])  # a stale split, still within what is scored
    query = vectors[FACTS // 2]
    with scoped(pool, HOARDER) as conn:  # an episode, read once though the facts are split
        episode = NewEpisode(summary="Violin lessons by the harbour, every Tuesday")
        LongTermMemory(pool).record_episode_in(conn, HOARDER, episode, vector=query)
    plan = plan_recall(HOARDER, QUERY, recipe=RecallRecipe(k=20), embedder=None,
                       now=datetime.now(UTC), query_embedding=query, sizes=sizes)  # fmt: skip
    assert plan.splits
    statements = {name: statement for name, statement, _, _ in reads(plan)}
    assert "FROM episodes" in statements["dense"]
    assert "FROM episodes" not in statements["dense_upper"]  # read once, with the lower range
    whole = _found(_whole(pool, query))
    assert sum(1 for found in whole if found[0] not in ids) == 1  # the episode
    with pool.connection() as conn:
        alone = _found(finish(plan, fetch(conn, plan, None)))
    assert alone == whole

    assert _found(finish(plan, served_fetch(pool, plan))) == whole


def test_a_session_split_reads_its_own_facts_and_its_users_as_the_whole_read_does(
    pool: ConnectionPool[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session reads its own facts and its user's lasting ones: the ranges of ids run across
    both, and the split read finds what the whole read finds in either."""
    monkeypatch.setattr(fact_sql, "EXACT_UP_TO", SPLIT_PAST)
    session = Scope.for_session(HOARDER.org_id, HOARDER.user_id, "trip")
    memory = LongTermMemory(pool)
    lasting = ingest_word_facts(memory, HOARDER, FACTS - 50, random.Random(31), DIM)
    own = ingest_word_facts(memory, session, 50, random.Random(37), DIM)
    sizes = ScopeSizes()
    for vector in (own[7], lasting[7], own[7], lasting[40]):  # counted, split found, then split
        split = _recall(pool, vector, sizes, session)
        assert _found(split) == _found(_whole(pool, vector, session))
        nearest = max(split.facts, key=lambda f: f.similarity or 0.0)
        assert (nearest.similarity or 0.0) > 0.999
    assert sizes.known(session, DIM) == FACTS
    assert sizes.split_id(session, DIM) is not None
