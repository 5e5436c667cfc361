"""A scope's size, once counted, picks the dense statement without counting again, and a large
scope's lexical read runs on a second connection beside the dense one: neither changes what
recall finds."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from typing import Any

import pytest
from psycopg_pool import ConnectionPool

from recollect.longterm import recall as recall_module
from recollect.longterm.facts import LongTermMemory
from recollect.longterm.recall import plan_recall, recall
from recollect.longterm.recipe import RecallRecipe
from recollect.longterm.records import Recollection
from recollect.longterm.scope_sizes import ScopeSizes
from recollect.store.scope import Scope
from tests.support.served_fetch import served_fetch
from tests.support.word_facts import ingest_word_facts

ANA = Scope.for_user("acme", "ana")
DIM = 16
FACTS = 300
QUERY = "violin lessons by the harbour"


def _filled(pool: ConnectionPool[Any]) -> list[list[float]]:
    return ingest_word_facts(LongTermMemory(pool), ANA, FACTS, random.Random(11), DIM)


def _recall(
    pool: ConnectionPool[Any], vector: list[float], sizes: ScopeSizes | None
) -> Recollection:
    return recall(pool, ANA, QUERY, recipe=RecallRecipe(k=20), embedder=None,
                  now=datetime.now(UTC), query_embedding=vector, sizes=sizes)  # fmt: skip


def _found(found: Recollection) -> list[tuple[str, float | None, float | None]]:
    """What recall found and why: each fact with its similarity and lexical score."""
    return [(f.fact.id, f.similarity, f.lexical) for f in found.facts]


def test_a_counted_scope_is_read_without_counting_and_finds_the_same(
    pool: ConnectionPool[Any],
) -> None:
    vectors = _filled(pool)
    sizes = ScopeSizes()
    first = _recall(pool, vectors[3], sizes)
    assert sizes.known(ANA, DIM) == FACTS
    assert sizes.known(ANA, DIM + 1) is None  # a count is of one vector width
    again = _recall(pool, vectors[3], sizes)
    assert _found(again) == _found(first) == _found(_recall(pool, vectors[3], None))
    nearest = max(first.facts, key=lambda f: f.similarity or 0.0)
    assert nearest.fact.text.endswith(" 3")


def test_a_stale_size_choosing_the_codes_still_finds_the_nearest_facts(
    pool: ConnectionPool[Any],
) -> None:
    vectors = _filled(pool)
    stale = ScopeSizes()
    stale.counted(ANA, DIM, 30_000)  # the scope has since shrunk to 300 facts
    for wanted in (0, 150, 299):
        assert _found(_recall(pool, vectors[wanted], stale)) == _found(
            _recall(pool, vectors[wanted], None)
        )


def test_an_expired_count_is_counted_again() -> None:
    sizes = ScopeSizes(kept_for=0.0)
    sizes.counted(ANA, DIM, 5, "01a2433e-db9b-7e72-9acf-995d156d8607")
    assert sizes.known(ANA, DIM) is None
    assert sizes.split_id(ANA, DIM) is None  # the split goes with its count
    kept = ScopeSizes()
    kept.counted(ANA, DIM, 5, "01a2433e-db9b-7e72-9acf-995d156d8607")
    assert kept.split_id(ANA, DIM) == "01a2433e-db9b-7e72-9acf-995d156d8607"
    kept.counted(ANA, DIM, 6)  # counted again by the dense read: the split is found again
    assert kept.split_id(ANA, DIM) is None
    bounded = ScopeSizes(size=2)
    for user in ("a", "b", "c"):
        bounded.counted(Scope.for_user("acme", user), DIM, 1)
    assert bounded.known(Scope.for_user("acme", "a"), DIM) is None
    assert bounded.known(Scope.for_user("acme", "c"), DIM) == 1


def test_a_large_scope_reads_its_words_beside_its_vectors(
    pool: ConnectionPool[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    vectors = _filled(pool)
    sizes = ScopeSizes()
    alone = _recall(pool, vectors[7], sizes)
    monkeypatch.setattr(recall_module, "FAN_OUT_FROM", 1)
    with pool.connection(), pool.connection():
        pass  # two connections open and idle
    before = pool.get_stats()
    beside = _recall(pool, vectors[7], sizes)
    after = pool.get_stats()
    assert after["requests_num"] - before["requests_num"] == 2, "a second connection was asked"
    assert after.get("requests_errors", 0) == before.get("requests_errors", 0), "and given"
    assert _found(beside) == _found(alone)
    assert any(f.lexical is not None for f in beside.facts)
    assert any(f.similarity is not None for f in beside.facts)

    plan = plan_recall(ANA, QUERY, recipe=RecallRecipe(k=20), embedder=None,
                       now=datetime.now(UTC), query_embedding=vectors[7], sizes=sizes)  # fmt: skip
    assert plan.fans_out
    assert _found(recall_module.finish(plan, served_fetch(pool, plan))) == _found(alone)
