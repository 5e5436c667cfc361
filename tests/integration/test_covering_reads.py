"""Recall's candidate reads use the covering indexes behind row-level security, on the generic
plans recall runs them with; and a fact of the offline embedder's width is stored whole."""

from __future__ import annotations

import random
import re
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest
from psycopg_pool import ConnectionPool

from recollect.longterm import fact_sql
from recollect.longterm.facts import LongTermMemory, scope_params
from recollect.longterm.recall import plan_recall, reads
from recollect.longterm.recipe import RecallRecipe
from recollect.longterm.records import FactCategory, NewFact
from recollect.longterm.vectors import Vector
from recollect.store.scope import Scope
from recollect.store.tenancy import scoped
from tests.support.db import all_rows
from tests.support.generic_plans import explain_generic
from tests.support.word_facts import ingest_word_facts, unit_vector

ANA = Scope.for_user("acme", "ana")
DIM = 384


def _generic_plan(
    pool: ConnectionPool[Any], statement: str, params: dict[str, Any], analyze: str = ""
) -> str:
    """EXPLAIN of `statement` as the app role, scoped to ANA, on its generic plan, with the
    sequential scan priced out: which index serves it is what is asked."""
    with scoped(pool, ANA) as conn:
        conn.execute("SET LOCAL enable_seqscan = off")
        return explain_generic(conn, statement, params, analyze)


READS = {
    "counted": ("dense", None, False, "facts_live_halves"),
    "exact": ("dense", 300, False, "facts_live_halves"),
    "coded": ("dense", 30_000, False, "facts_live_bits"),
    "split point": ("split", 30_000, False, "facts_live_bits"),
    "coded, lower range": ("dense", 30_000, True, "facts_live_bits"),
    "coded, upper range": ("dense_upper", 30_000, True, "facts_live_bits"),
    "lexical": ("lexical", None, False, "facts_live_words"),
}
"""A read, the scope size the process knows (None: counted by the statement), whether it knows
the id that splits the scope, and the read's index."""


@pytest.mark.parametrize("case", list(READS))
def test_candidates_come_from_covering_indexes_alone(pool: ConnectionPool[Any], case: str) -> None:
    name, size, split, index = READS[case]
    rng = random.Random(5)
    memory = LongTermMemory(pool)
    vectors = ingest_word_facts(memory, ANA, 300, rng, DIM)
    plan = plan_recall(ANA, "violin lessons in the garden", recipe=RecallRecipe(), embedder=None,
                       now=datetime.now(UTC), query_embedding=vectors[0])  # fmt: skip
    ids = sorted(str(r["id"]) for r in all_rows(pool, "SELECT id FROM facts"))
    split_id = ids[150] if split else None
    plan = replace(plan, size=size, split_id=split_id)
    statement = next((sql, params) for read, sql, params, _ in reads(plan) if read == name)
    text = _generic_plan(pool, *statement, "(ANALYZE, COSTS OFF, TIMING OFF)")
    assert f"Index Only Scan using {index} on facts" in text, text
    assert per_row_waste(text, 300 // 2) == [], text
    assert "facts_live_scope" not in text, text
    assert ("counted" in text) == (case in ("counted", "split point")), text
    if split:  # each range's codes are read from its own part of the index, not filtered
        lines = text.splitlines()
        scans = [i for i, line in enumerate(lines) if f"Index Only Scan using {index}" in line]
        conditions = [lines[i + 1] for i in scans]
        assert scans, text
        assert all(re.search(r"Index Cond: .*\(id (<|>=) ", c) for c in conditions), text


QUERY_DERIVED = ("to_tsvector(", "binary_quantize(", "plainto_tsquery(")


def per_row_waste(plan: str, rows: int) -> list[str]:
    """What a plan does for every row of the scope that it need not: read heap rows only to
    drop them (a filter removing a whole scope's worth outside a covering index), or derive
    something from the query again for each row it compares (a generic plan does not fold it;
    a scalar subquery makes it once)."""
    waste = []
    node = ""
    for line in plan.splitlines():
        if "(actual" in line:
            node = line.strip()
        removed = re.search(r"Rows Removed by Filter: (\d+)", line)
        covering = node.lstrip("-> ").startswith("Index Only Scan")  # what it is for
        if removed and int(removed.group(1)) >= rows and not covering:
            waste.append(f"{node}: {line.strip()}")
        compared = any(key in line for key in ("Filter:", "Sort Key:", "Index Cond:"))
        if compared and any(call in line for call in QUERY_DERIVED):
            waste.append(line.strip())
    return waste


WRITES = {
    "SAME_SUBJECT_OR_TEXT": "facts_live_words",
    "NEAREST_DENSE": "facts_live_halves",
    "NEAREST_LEXICAL": "facts_live_words",
}
"""The write path's neighbour reads and the covering index each scans instead of the heap."""


@pytest.mark.parametrize("name", list(WRITES))
def test_a_writes_neighbours_come_from_covering_indexes(
    pool: ConnectionPool[Any], name: str
) -> None:
    rng = random.Random(6)
    memory = LongTermMemory(pool)
    vectors = ingest_word_facts(memory, ANA, 300, rng, DIM)
    params = {**scope_params(ANA), "now": datetime.now(UTC), "replaces": "{}",
              "subject": "instrument", "text": "violin lessons in the garden",
              "query": "violin lessons in the garden", "vector": Vector(vectors[0]),
              "dim": DIM, "limit": 5, "dense_limit": 20}  # fmt: skip
    statement = getattr(fact_sql, name)[ANA.kind]
    text = _generic_plan(pool, statement, params, "(ANALYZE, COSTS OFF, TIMING OFF)")
    assert f"Index Only Scan using {WRITES[name]} on facts" in text, text
    assert "Seq Scan on facts" not in text, text
    assert per_row_waste(text, 300 // 2) == [], text


def test_a_fact_of_the_offline_embedders_width_is_stored_whole(pool: ConnectionPool[Any]) -> None:
    memory = LongTermMemory(pool)
    memory.ingest(
        ANA,
        [NewFact(text="Keeps a ledger of every harbour she has sailed into. " * 6,
                 category=FactCategory.EVENT, confidence=0.8)],
        embeddings=[unit_vector(random.Random(1), DIM)],
    )  # fmt: skip
    toast = all_rows(
        pool,
        "SELECT pg_relation_size(reltoastrelid) AS bytes FROM pg_class WHERE relname = 'facts'",
    )
    assert toast[0]["bytes"] == 0
