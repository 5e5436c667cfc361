"""Many look-alike facts for one scope: a few shared words each, numbered so no two are the
same text, with random unit vectors, for reads that must find one fact among them."""

from __future__ import annotations

import random

from recollect.longterm.facts import LongTermMemory
from recollect.longterm.records import FactCategory, NewFact
from recollect.store.scope import Scope

WORDS = ("tea", "garden", "violin", "harbour", "ledger", "summit", "orchid", "lantern")
WORDS_A_FACT = 6


def unit_vector(rng: random.Random, dim: int) -> list[float]:
    """A random direction of `dim` dimensions, of length 1."""
    v = [rng.gauss(0.0, 1.0) for _ in range(dim)]
    norm = sum(x * x for x in v) ** 0.5
    return [x / norm for x in v]


def ingest_word_facts(
    memory: LongTermMemory, scope: Scope, count: int, rng: random.Random, dim: int
) -> list[list[float]]:
    """Store `count` such facts in `scope`; their vectors, in the order of the facts."""
    vectors = [unit_vector(rng, dim) for _ in range(count)]
    facts = [
        NewFact(text=" ".join(rng.choices(WORDS, k=WORDS_A_FACT)) + f" {i}",
                category=FactCategory.EVENT, confidence=0.8)
        for i in range(count)
    ]  # fmt: skip
    memory.ingest(scope, facts, embeddings=vectors)
    return vectors
