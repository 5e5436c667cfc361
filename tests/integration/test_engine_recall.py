"""The engine's read path with the offline embedder: candidates, `ranking.rank`, reranking.

The same facts, embedder and ranking the LoCoMo benchmark measures, on the real Postgres
behind row-level security.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from psycopg_pool import ConnectionPool

from bench.locomo import load, score
from recollect.longterm.configured import DEFAULT_RERANK_LIMIT, configured_memory
from recollect.longterm.facts import LongTermMemory
from recollect.longterm.recipe import NO_FLOOR, Method, RecallRecipe
from recollect.longterm.records import FactCategory, NewFact
from recollect.longterm.rerankers import LateInteractionReranker, Reranker
from recollect.models.embeddings import init_embeddings
from recollect.store.scope import Scope

NOW = datetime(2026, 6, 1, tzinfo=UTC)
DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "locomo" / "locomo_dev.json"
ANA = Scope.for_user("acme", "ana")
BEN = Scope.for_user("acme", "ben")

FACTS = [
    ("Ana adopted a grey cat named Pixel from the shelter.", ("D1:1",), 300),
    ("Ana is training for the Lisbon half marathon in October.", ("D1:4",), 200),
    ("Ben plays bass guitar in a jazz trio on Fridays.", ("D2:2",), 100),
    ("Ana's team builds the frontend with React 19.", ("D3:1",), 1),
    ("Ana's team used React 16 for the frontend.", ("D3:9",), 240),
]


class OverlapReranker:
    """A real `Reranker` that also warms: scores by shared words, records what it saw."""

    def __init__(self) -> None:
        self.warmed: list[str] = []
        self.scored: list[list[str]] = []

    def warm(self, texts: Sequence[str]) -> None:
        self.warmed.extend(texts)

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        self.scored.append(list(texts))
        words = {w.strip("?.,'s").lower() for w in query.split()}
        return [float(len(words & {w.strip("?.,'s").lower() for w in t.split()})) for t in texts]


def ingest(memory: LongTermMemory, scope: Scope = ANA) -> None:
    memory.ingest(
        scope,
        [
            NewFact(
                text=text,
                category=FactCategory.TECHNICAL_STACK if "React" in text else FactCategory.EVENT,
                confidence=0.9 if "16" in text else 0.7,
                source_ids=sources,
                learned_at=NOW - timedelta(days=age),
            )
            for text, sources, age in FACTS
        ],
    )


@pytest.fixture
def memory(pool: ConnectionPool[Any]) -> LongTermMemory:
    built = LongTermMemory(pool, embedder=init_embeddings("offline"))
    ingest(built)
    return built


def test_recall_finds_the_fact_and_carries_every_score(memory: LongTermMemory) -> None:
    found = memory.recall(ANA, "What is the name of Ana's cat?", k=3, now=NOW).facts
    assert found[0].fact.source_ids == ("D1:1",)
    assert found[0].similarity is not None
    assert found[0].lexical is not None
    assert found[0].fused == 1.0  # first in both lists
    assert found[0].rerank is None
    assert len(found) == 3


def test_any_word_full_text_matches_where_all_words_do_not(memory: LongTermMemory) -> None:
    lexical = RecallRecipe(methods=(Method.LEXICAL,))
    question = "Which race is Ana preparing for this autumn, the marathon?"
    found = memory.recall(ANA, question, recipe=lexical, now=NOW).facts
    assert found[0].fact.source_ids == ("D1:4",)
    assert found[0].similarity is None


def test_hyphenated_words_do_not_demand_adjacent_matches(memory: LongTermMemory) -> None:
    lexical = RecallRecipe(methods=(Method.LEXICAL,))
    found = memory.recall(ANA, "trio-jazz", recipe=lexical, now=NOW).facts
    assert [f.fact.source_ids for f in found] == [("D2:2",)]


def test_the_fresh_fact_outranks_the_stale_one(memory: LongTermMemory) -> None:
    question = "What framework does Ana's team use for the frontend?"
    found = memory.recall(ANA, question, k=2, now=NOW).facts
    assert [f.fact.source_ids for f in found] == [("D3:1",), ("D3:9",)]


def test_other_users_facts_are_never_returned(memory: LongTermMemory) -> None:
    assert memory.recall(BEN, "What is the name of Ana's cat?", now=NOW).facts == ()


def test_the_reranker_runs_when_the_recipe_asks(pool: ConnectionPool[Any]) -> None:
    reranker = OverlapReranker()
    assert isinstance(reranker, Reranker)
    memory = LongTermMemory(pool, embedder=init_embeddings("offline"), reranker=reranker)
    ingest(memory)
    assert reranker.warmed == []  # only the packaged late-interaction model stores encodings
    memory.recall(ANA, "Ana cat", now=NOW)
    assert reranker.scored == []  # the default recipe does not rerank
    recipe = RecallRecipe(rerank_limit=2, rerank_weight=1.0, min_similarity=NO_FLOOR)
    found = memory.recall(ANA, "grey cat named Pixel", recipe=recipe, now=NOW).facts
    assert len(reranker.scored) == 1
    assert len(reranker.scored[0]) == 2
    assert found[0].fact.source_ids == ("D1:1",)
    assert found[0].rerank == 4.0
    assert sum(f.rerank is not None for f in found) == 2


def test_configured_memory_follows_the_environment(
    pool: ConnectionPool[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECOLLECT_EMBEDDINGS", "none")
    lexical = configured_memory(pool)
    assert lexical.embedder is None
    assert isinstance(lexical.reranker, LateInteractionReranker)  # the default
    assert lexical.recipe.rerank_limit == DEFAULT_RERANK_LIMIT
    monkeypatch.setenv("RECOLLECT_RERANKER", "none")
    assert configured_memory(pool).reranker is None
    assert configured_memory(pool).recipe.rerank_limit == 0
    monkeypatch.delenv("RECOLLECT_RERANKER")
    ingest(lexical)
    (top, *_) = lexical.recall(ANA, "grey cat", now=NOW).facts
    assert top.fact.source_ids == ("D1:1",)
    assert top.similarity is None
    monkeypatch.setenv("RECOLLECT_EMBEDDINGS", "offline")
    dense = configured_memory(pool)
    assert dense.embedder is init_embeddings("offline")  # one model per process
    ingest(dense, BEN)
    assert dense.recall(BEN, "kitten", now=NOW).facts[0].similarity is not None
    assert DEFAULT_RERANK_LIMIT > 0


def test_the_packaged_cross_encoder_reranks_through_the_engine(
    pool: ConnectionPool[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("onnxruntime", reason="needs the `rerank` extra")
    monkeypatch.setenv("RECOLLECT_EMBEDDINGS", "offline")
    monkeypatch.setenv("RECOLLECT_RERANKER", "cross-encoder")
    memory = configured_memory(pool)
    assert memory.recipe.rerank_limit == DEFAULT_RERANK_LIMIT
    ingest(memory)
    found = memory.recall(ANA, "What is the name of Ana's cat?", now=NOW).facts
    assert found[0].fact.source_ids == ("D1:1",)
    assert all(f.rerank is not None for f in found)  # every live fact fits the head


@pytest.mark.timeout(900)  # a whole conversation encoded and asked twice, on shared cores
def test_late_interaction_finds_more_evidence_on_a_locomo_conversation(
    pool: ConnectionPool[Any],
) -> None:
    """Quality can regress silently: one real conversation, with and without the reranker."""
    pytest.importorskip("onnxruntime", reason="needs the `rerank` extra")
    if not DATA.is_file():
        pytest.skip(f"LoCoMo dev data not found beside the repository ({DATA.name})")
    from recollect.longterm.rerankers import load_reranker

    (conversation, *_) = load(DATA)
    memory = LongTermMemory(
        pool, embedder=init_embeddings("offline"), reranker=load_reranker("late-interaction")
    )
    memory.ingest(conversation.scope, conversation.new_facts())
    plain = RecallRecipe(k=10)
    reranked = RecallRecipe(k=10, rerank_limit=DEFAULT_RERANK_LIMIT)
    results: dict[str, list[list[tuple[str, ...]]]] = {"plain": [], "reranked": []}
    for question in conversation.questions:
        for name, recipe in (("plain", plain), ("reranked", reranked)):
            found = memory.recall(
                conversation.scope, question.text, recipe=recipe, now=conversation.now
            )
            results[name].append([f.fact.source_ids for f in found.facts])
    plain_r5 = score(conversation.questions, results["plain"])["recall_at_5"]
    reranked_r5 = score(conversation.questions, results["reranked"])["recall_at_5"]
    assert reranked_r5 >= plain_r5 + 0.015, (plain_r5, reranked_r5)


def test_scoring_counts_evidence_shares() -> None:
    from bench.locomo import Question

    q = Question(0, "q", ("D1:1", "D1:2"), 1)
    result = score([q], [[("D9:9",), ("D1:1",)] + [("D5:5",)] * 3 + [("D1:2",)]])
    assert result["recall_at_5"] == 0.5
    assert result["recall_at_10"] == 1.0
    assert result["hit_at_5"] == 1.0
    assert result["by_category"]["multi_hop"]["questions"] == 1


def test_dev_data_loads_as_facts_and_answerable_questions() -> None:
    if not DATA.is_file():
        pytest.skip(f"LoCoMo dev data not found beside the repository ({DATA.name})")
    conversations = load(DATA)
    assert len(conversations) == 6
    assert sum(len(c.facts) for c in conversations) == 1487
    assert sum(len(c.questions) for c in conversations) == 883
    assert all(q.category in (1, 2, 3, 4) for c in conversations for q in c.questions)


def test_bench_refuses_a_missing_data_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bench.locomo import main

    with pytest.raises(SystemExit) as exit_info:
        main(["--data", str(tmp_path / "missing.json"), "--json", str(tmp_path / "out.json")])
    assert exit_info.value.code == 2
    assert "is not a file" in capsys.readouterr().err
    assert not (tmp_path / "out.json").exists()
