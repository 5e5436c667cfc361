"""A user with more facts than `fact_sql.EXACT_UP_TO` is ranked by binary codes first, then the
best of them exactly; a smaller user is scored exactly in full."""

from __future__ import annotations

import random
from typing import Any

from psycopg_pool import ConnectionPool

from recollect.longterm.fact_sql import EXACT_UP_TO
from recollect.longterm.facts import LongTermMemory
from recollect.longterm.recipe import Method, RecallRecipe
from recollect.longterm.records import FactCategory, NewFact
from recollect.store.scope import Scope
from tests.support.word_facts import unit_vector

LARGE = Scope.for_user("acme", "hoarder")
DIM = 16


def test_a_user_past_the_exact_limit_still_gets_its_nearest_facts(
    pool: ConnectionPool[Any],
) -> None:
    rng = random.Random(3)
    vectors = [unit_vector(rng, DIM) for _ in range(EXACT_UP_TO + 50)]
    facts = [
        NewFact(text=f"note {i}", category=FactCategory.EVENT, confidence=0.8)
        for i in range(len(vectors))
    ]
    memory = LongTermMemory(pool, recipe=RecallRecipe(methods=(Method.DENSE,), k=3))
    memory.ingest(LARGE, facts, embeddings=vectors)
    for wanted in (7, EXACT_UP_TO + 20):
        found = memory.recall(LARGE, "which note?", query_embedding=vectors[wanted])
        assert found.facts[0].fact.text == f"note {wanted}"
        assert found.facts[0].similarity is not None
        assert found.facts[0].similarity > 0.999
