"""The LoCoMo benchmark's precomputed embeddings recall as the model they stand in for."""

from __future__ import annotations

from langchain_core.embeddings import DeterministicFakeEmbedding

from bench.locomo import PrecomputedEmbeddings
from recollect.longterm.recall import relevance_floor
from recollect.longterm.recipe import RecallRecipe


class _Floored(DeterministicFakeEmbedding):
    relevance_floor: float = 0.5


def test_the_models_relevance_floor_is_kept() -> None:
    model = _Floored(size=4)
    cached = PrecomputedEmbeddings({"q": [1.0, 0.0, 0.0, 0.0]}, model)
    assert relevance_floor(RecallRecipe(), cached) == relevance_floor(RecallRecipe(), model) == 0.5
    assert cached.embed_query("q") == [1.0, 0.0, 0.0, 0.0]


def test_a_model_without_a_floor_gives_none() -> None:
    cached = PrecomputedEmbeddings({}, DeterministicFakeEmbedding(size=4))
    assert relevance_floor(RecallRecipe(), cached) is None
