"""The embedder factory: names, the offline default, and clear errors for bad settings."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest

from recollect.longterm.rerankers import LateInteractionReranker, load_reranker, rerank_text
from recollect.models.embeddings import (
    OFFLINE_DIMENSIONS,
    describe_embeddings,
    embeddings_name,
    init_embeddings,
)
from recollect.store.errors import ConfigurationError


def test_default_is_the_offline_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RECOLLECT_EMBEDDINGS", raising=False)
    assert embeddings_name() == "offline"
    assert "bundled" in describe_embeddings()


def test_none_means_lexical_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECOLLECT_EMBEDDINGS", "none")
    assert init_embeddings() is None
    assert "full-text only" in describe_embeddings()


def test_offline_embeddings_are_unit_vectors_and_rank_sensibly() -> None:
    embedder = init_embeddings("offline")
    assert embedder is not None
    query = embedder.embed_query("Which framework does the team use for the frontend?")
    react, tea = embedder.embed_documents(
        ["The team builds its frontend with React 19.", "Ana drinks green tea every morning."]
    )
    assert len(query) == OFFLINE_DIMENSIONS
    assert math.isclose(math.fsum(x * x for x in query), 1.0, rel_tol=1e-3)

    def dot(a: list[float], b: list[float]) -> float:
        return math.fsum(x * y for x, y in zip(a, b, strict=True))

    assert dot(query, react) > dot(query, tea)
    assert embedder.embed_documents([]) == []


@pytest.mark.parametrize("name", ["bogus", "nanoe6"])
def test_unknown_embedder_names_are_refused(name: str) -> None:
    with pytest.raises(ConfigurationError, match="is not an embedder"):
        init_embeddings(name)


def test_unknown_provider_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="no-such-provider"):
        init_embeddings("no-such-provider:model")


def test_unknown_reranker_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECOLLECT_RERANKER", "cross-everything")
    with pytest.raises(ConfigurationError, match="is not a reranker"):
        load_reranker()
    monkeypatch.setenv("RECOLLECT_RERANKER", "none")
    assert load_reranker() is None


def test_late_interaction_is_the_default_reranker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RECOLLECT_RERANKER", raising=False)
    assert isinstance(load_reranker(), LateInteractionReranker)
    monkeypatch.setenv("RECOLLECT_RERANKER", "")
    assert isinstance(load_reranker(), LateInteractionReranker)


@pytest.mark.parametrize("name", ["late-interaction", "cross-encoder"])
def test_packaged_rerankers_prefer_the_fact_that_answers(name: str) -> None:
    pytest.importorskip("onnxruntime", reason="needs the `rerank` extra")
    reranker = load_reranker(name)
    assert reranker is not None
    scores = reranker.score(
        "What instrument does Ana play?",
        ["Ana plays the cello in a quartet.", "Ana moved to Lisbon last spring.", ""],
    )
    assert len(scores) == 3
    assert scores[0] > scores[1] > scores[2]
    assert reranker.score("anything", []) == []


def test_a_dated_fact_helps_a_when_question() -> None:
    pytest.importorskip("onnxruntime", reason="needs the `rerank` extra")
    reranker = load_reranker("late-interaction")
    assert reranker is not None
    when = datetime(2023, 5, 7, tzinfo=UTC)
    assert rerank_text("Ana ran a charity race.", when) == "7 May 2023: Ana ran a charity race."
    dated, plain = reranker.score(
        "When did Ana run a charity race?",
        [rerank_text("Ana ran a charity race.", when), "Ana ran a charity race."],
    )
    assert dated > plain
