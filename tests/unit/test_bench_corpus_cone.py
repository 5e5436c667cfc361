"""`bench.recall_latency --cone` puts the corpus in one narrow cone, as a sentence embedder's
vectors lie, so that their codes share most signs; without it the corpus is random directions."""

from __future__ import annotations

import itertools
import random

from bench.recall_latency import Corpus


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (sum(x * x for x in a) * sum(y * y for y in b)) ** 0.5


def test_a_cone_makes_unrelated_vectors_close_and_their_signs_alike() -> None:
    corpus = Corpus(1000, 10, 64, large=100, huge=500, cone=1.7)
    rng = random.Random(3)
    vectors = [corpus.vector(rng).to_list() for _ in range(30)]
    pairs = list(itertools.combinations(vectors, 2))
    assert min(_cosine(a, b) for a, b in pairs) > 0.5
    differing = sum(sum((x > 0) != (y > 0) for x, y in zip(a, b, strict=True)) for a, b in pairs)
    assert differing / (len(pairs) * 64) < 0.3


def test_without_a_cone_the_corpus_is_random_directions() -> None:
    corpus = Corpus(1000, 10, 64, large=100, huge=500)
    rng = random.Random(5)
    vectors = [corpus.vector(rng).to_list() for _ in range(30)]
    pairs = list(itertools.combinations(vectors, 2))
    differing = sum(sum((x > 0) != (y > 0) for x, y in zip(a, b, strict=True)) for a, b in pairs)
    assert 0.4 < differing / (len(pairs) * 64) < 0.6
