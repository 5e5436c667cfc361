"""A user with more facts than `fact_sql.EXACT_UP_TO` is ranked by binary codes first, then the
best of them exactly; a smaller user is ranked on every vector at half precision, and what
recall returns is scored at full precision."""

from __future__ import annotations

import random
from array import array
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest
from psycopg_pool import ConnectionPool

from recollect.longterm.fact_sql import CODES_SAMPLED, EXACT_UP_TO, RESCORED
from recollect.longterm.facts import LongTermMemory
from recollect.longterm.recall import plan_recall, reads
from recollect.longterm.recipe import Method, RecallRecipe
from recollect.longterm.records import FactCategory, NewFact
from recollect.store.scope import Scope
from recollect.store.tenancy import scoped
from tests.support.generic_plans import explain_generic
from tests.support.word_facts import unit_vector

LARGE = Scope.for_user("acme", "hoarder")
DIM = 16


def test_a_user_past_the_exact_limit_still_gets_its_nearest_facts(
    pool: ConnectionPool[Any],
) -> None:
    rng = random.Random(3)
    vectors = [unit_vector(rng, DIM) for _ in range(EXACT_UP_TO + 50)]
    memory = _notes(pool, LARGE, vectors, k=3)
    for wanted in (7, EXACT_UP_TO + 20):
        found = memory.recall(LARGE, "which note?", query_embedding=vectors[wanted])
        assert found.facts[0].fact.text == f"note {wanted}"
        assert found.facts[0].similarity is not None
        assert found.facts[0].similarity > 0.999
    recipe = RecallRecipe(methods=(Method.DENSE,))
    plan = plan_recall(LARGE, "which note?", recipe=recipe, embedder=None,
                       now=datetime.now(UTC), query_embedding=vectors[7])  # fmt: skip
    plan = replace(plan, size=len(vectors))
    _, statement, params, _ = next(r for r in reads(plan) if r[0] == "dense")
    with scoped(pool, LARGE) as conn:
        text = explain_generic(conn, statement, params, "(ANALYZE, COSTS OFF, TIMING OFF)")
    scans = [line for line in text.splitlines() if "Index Only Scan using facts_live_bits" in line]
    assert len(scans) == 3, text  # the sample, the codes within the cut, every code
    assert ["never executed" in line for line in scans] == [False, False, True], text
    exact = [line for line in text.splitlines() if "using facts_live_halves" in line]
    assert len(exact) == 1, text
    assert "never executed" in exact[0], text


def test_codes_that_share_most_signs_even_centred_leave_a_large_user_ranked_exactly(
    pool: ConnectionPool[Any],
) -> None:
    """Vectors that differ in only 3 of their 16 components share the other 13 signs even less
    their mean (`schema.centred_codes`), so their codes cannot tell the nearest from the rest
    (`fact_sql.CODES_SPREAD`): the scope is ranked on every vector, and recall returns an exact
    scan's nearest facts."""
    scope = Scope.for_user("acme", "narrow-hoarder")
    rng = random.Random(17)
    vectors = [_three_free(rng) for _ in range(EXACT_UP_TO + 50)]
    memory = _notes(pool, scope, vectors, k=10)
    stored = [[float(array("f", [x])[0]) for x in vector] for vector in vectors]
    for _ in range(3):
        query = _three_free(rng)
        cosines = [sum(a * b for a, b in zip(v, query, strict=True)) for v in stored]
        nearest = sorted(range(len(vectors)), key=lambda i: -cosines[i])[:10]
        for _ in ("counted", "sized"):
            found = memory.recall(scope, "which note?", query_embedding=query)
            assert [int(r.fact.text.split()[1]) for r in found.facts] == nearest


def _three_free(rng: random.Random) -> list[float]:
    """A unit vector whose first 13 components are one fixed value and whose last 3 point
    anywhere (a fixed length, so normalising leaves the 13 alike)."""
    free = unit_vector(rng, 3)
    return _unit([0.1] * (DIM - 3) + free)


def test_a_scope_within_the_exact_limit_never_reads_the_codes_sample(
    pool: ConnectionPool[Any],
) -> None:
    """The statement that counts the scope reads the codes' sample only past `EXACT_UP_TO`: a
    small user pays for the count alone."""
    scope = Scope.for_user("acme", "modest")
    rng = random.Random(23)
    vectors = [unit_vector(rng, DIM) for _ in range(60)]
    _notes(pool, scope, vectors, k=10)
    recipe = RecallRecipe(methods=(Method.DENSE,))
    plan = plan_recall(scope, "which note?", recipe=recipe, embedder=None,
                       now=datetime.now(UTC), query_embedding=vectors[0])  # fmt: skip
    assert plan.size is None
    _, statement, params, _ = next(r for r in reads(plan) if r[0] == "dense")
    with scoped(pool, scope) as conn:
        text = explain_generic(conn, statement, params, "(ANALYZE, COSTS OFF, TIMING OFF)")
    scans = [line for line in text.splitlines() if "Index Only Scan using facts_live_bits" in line]
    assert len(scans) == 4, text  # the count, the sample, the codes within the cut, every code
    assert ["never executed" in line for line in scans] == [False, True, True, True], text


def test_codes_sampled_nearer_than_the_rest_do_not_hide_the_nearest_fact(
    pool: ConnectionPool[Any],
) -> None:
    """The codes read first set how near a code must be to be ranked (`fact_sql.CODES_SAMPLED`).
    Here they share every sign with the query, so that cut keeps only them, fewer than
    `RESCORED`; the nearest fact, one sign away and written last, is still found."""
    scope = Scope.for_user("acme", "early-hoarder")
    rng = random.Random(5)
    query = _unit([1.0] * (DIM - 1) + [0.02])
    nearest = _unit([1.0] * (DIM - 1) + [-0.02])
    same_signs = [_unit([abs(rng.gauss(0.0, 1.0)) for _ in range(DIM)]) for _ in range(300)]
    far = [_unit([-abs(rng.gauss(0.0, 1.0)) for _ in range(DIM)]) for _ in range(1700)]
    rest = [unit_vector(rng, DIM) for _ in range(EXACT_UP_TO)]
    vectors = same_signs + far + rest + [nearest]
    assert len(same_signs) < RESCORED <= CODES_SAMPLED == len(same_signs) + len(far)
    memory = _notes(pool, scope, vectors, k=1)
    for _ in ("counted", "sized"):  # the first read counts the scope, the next is told its size
        found = memory.recall(scope, "which note?", query_embedding=query)
        assert found.facts[0].fact.text == f"note {len(vectors) - 1}"


def _notes(
    pool: ConnectionPool[Any], scope: Scope, vectors: list[list[float]], *, k: int
) -> LongTermMemory:
    """`vectors` imported as facts "note 0", "note 1", ..., and a dense-only memory recalling k."""
    memory = LongTermMemory(pool, recipe=RecallRecipe(methods=(Method.DENSE,), k=k))
    facts = [
        NewFact(text=f"note {i}", category=FactCategory.EVENT, confidence=0.8)
        for i in range(len(vectors))
    ]
    memory.ingest(scope, facts, embeddings=vectors)
    return memory


def _unit(vector: list[float]) -> list[float]:
    norm = sum(x * x for x in vector) ** 0.5
    return [x / norm for x in vector]


def test_a_small_users_similarities_are_exact_though_ranked_at_half_precision(
    pool: ConnectionPool[Any],
) -> None:
    """The exact read ranks by `embedding_half`; the similarities recall returns come from the
    full-precision vectors (half precision is off by about 1e-4)."""
    scope = Scope.for_user("acme", "precise")
    rng = random.Random(11)
    vectors = [unit_vector(rng, DIM) for _ in range(40)]
    memory = _notes(pool, scope, vectors, k=10)
    query = unit_vector(rng, DIM)
    found = memory.recall(scope, "which note?", query_embedding=query)
    assert len(found.facts) == 10
    for recalled in found.facts:
        vector = [float(array("f", [x])[0]) for x in vectors[int(recalled.fact.text.split()[1])]]
        exact = sum(a * b for a, b in zip(vector, query, strict=True))
        assert recalled.similarity == pytest.approx(exact, abs=2e-6)
