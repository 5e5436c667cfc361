"""The benchmark's candidate generator on the real Postgres: SQL candidates, then `rank`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest

from bench.locomo import load, score
from bench.locomo_candidates import Fact, LocomoIndex
from recollect.memory.embeddings import init_embeddings
from recollect.memory.recipe import Method, RecallRecipe

NOW = datetime(2026, 6, 1, tzinfo=UTC)
DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "locomo" / "locomo_dev.json"

FACTS = [
    ("Ana adopted a grey cat named Pixel from the shelter.", ("D1:1",), 300),
    ("Ana is training for the Lisbon half marathon in October.", ("D1:4",), 200),
    ("Ben plays bass guitar in a jazz trio on Fridays.", ("D2:2",), 100),
    ("Ana's team builds the frontend with React 19.", ("D3:1",), 1),
    ("Ana's team used React 16 for the frontend.", ("D3:9",), 240),
]


@pytest.fixture
def index(database_uri: str) -> Any:
    embedder = init_embeddings("offline")
    assert embedder is not None
    facts = [
        Fact(f"f{n}", 7, text, sources, NOW - timedelta(days=age))
        for n, (text, sources, age) in enumerate(FACTS)
    ]
    with psycopg.connect(database_uri, autocommit=True) as conn:
        built = LocomoIndex(conn, 384)
        built.ingest(facts, embedder.embed_documents([f.text for f in facts]))
        yield built, embedder


def test_recall_finds_the_fact_and_scores_every_stage(index: Any) -> None:
    built, embedder = index
    question = "What is the name of Ana's cat?"
    ranked = built.recollect_recall(
        7, question, embedder.embed_query(question), RecallRecipe(k=3), NOW
    )
    assert ranked[0].id == "f0"
    assert ranked[0].candidate.dense_rank == 1
    assert ranked[0].candidate.lexical_rank is not None
    assert len(ranked) == 3


def test_any_word_query_handling_matches_where_all_words_do_not(index: Any) -> None:
    built, _ = index
    question = "Which race is Ana preparing for this autumn, the marathon?"
    recipe = RecallRecipe(methods=(Method.LEXICAL,))
    strict = built.candidates(7, question, None, recipe, any_word=False)
    loose = built.candidates(7, question, None, recipe, any_word=True)
    assert strict == []
    assert loose[0].id == "f1"


def test_lexical_only_recall_works_without_an_embedder(index: Any) -> None:
    built, _ = index
    ranked = built.recollect_recall(7, "bass guitar trio", None, RecallRecipe(k=2), NOW)
    assert ranked[0].id == "f2"
    assert ranked[0].candidate.similarity is None


def test_the_fresh_fact_outranks_the_stale_one(index: Any) -> None:
    built, embedder = index
    question = "What framework does Ana's team use for the frontend?"
    ranked = built.recollect_recall(
        7, question, embedder.embed_query(question), RecallRecipe(k=2), NOW
    )
    assert [r.id for r in ranked] == ["f3", "f4"]


def test_other_scopes_are_never_returned(index: Any) -> None:
    built, embedder = index
    question = "What is the name of Ana's cat?"
    assert built.recollect_recall(8, question, embedder.embed_query(question),
                                  RecallRecipe(), NOW) == []  # fmt: skip


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
