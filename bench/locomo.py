"""LoCoMo retrieval: does recollect's recall find the evidence better than stock LangGraph?

Per conversation, every observation becomes a fact (sources = its evidence dialogue ids,
learned at its session's date); every answerable question (categories 1-4, with evidence)
recalls the top k. Scores: evidence recall@k (share of the question's evidence ids among the
sources of the top k facts) and hit@5 (any evidence id in the top 5), overall and per
category, with p50/p95 recall latency. Query embeddings are computed once up front and
reported separately, so latency is the recall alone for every system.

Systems, in one run and one process, all on the same embedder:
- `stock`: LangGraph's `PostgresStore` vector search;
- `fulltext`: Postgres full-text search alone (ts_rank over the question's words), through
  the engine with a lexical-only recipe and no recency or confidence;
- `recollect`: the engine itself, `LongTermMemory.ingest` then `LongTermMemory.recall` (dense +
  full-text candidates, fused and ranked by `recollect.longterm.ranking`, the fused head re-scored
  by the packaged cross-encoder when the `rerank` extra is installed), each conversation a user
  behind row-level security;
- `recollect_late_interaction`: the same with the cheaper late-interaction reranker;
- `recollect_no_rerank`: the same without a reranker.
- `recollect_default`: what a user gets with nothing configured: late interaction on the fused
  top 40, the embedder's relevance floor, English-only reranking.
`ablation` adds one component at a time, then varies the reranker's candidate pool.

Honest split: constants are tuned on the `--tune` conversations (default 0,1,2: the sweep of
relevance floor, head size and blend weight is in `tuning`), systems are reported on the
`--report` conversations (default 3,4,5) with paired bootstrap 95% confidence intervals of each
system's recall@5 minus stock's (`ci_vs_stock`). `cold_vs_warm` times the default path with its
late-interaction cache emptied before every question (encodings read from `fact_encodings`)
against the warm cache.

    python -m bench.locomo --data ../shared/data/locomo/locomo_dev.json --json out.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
from langchain_core.embeddings import Embeddings

from recollect.longterm.configured import DEFAULT_RERANK_LIMIT
from recollect.longterm.facts import LongTermMemory
from recollect.longterm.recall import RELEVANCE_FLOOR_ATTRIBUTE
from recollect.longterm.recipe import NO_FLOOR, Method, RecallRecipe
from recollect.longterm.records import FactCategory, NewFact
from recollect.longterm.rerankers import (
    CROSS_ENCODER,
    LATE_INTERACTION,
    LateInteractionReranker,
    Reranker,
    load_reranker,
)
from recollect.models.embeddings import embed_texts, embeddings_name, init_embeddings
from recollect.store.migrations import migrate
from recollect.store.roles import app_uri
from recollect.store.scope import Scope
from recollect.store.server import CONNECTION_KWARGS, open_pool, resolve_uri, with_database

CATEGORIES = {1: "multi_hop", 2: "temporal", 3: "open_domain", 4: "single_hop"}
DATE_FORMAT = "%I:%M %p on %d %B, %Y"
DEFAULT_DATA = Path("..") / "shared" / "data" / "locomo" / "locomo_dev.json"
"""Relative to the repository root, where the shared test data sits beside it."""
ORG = "locomo"


@dataclass(frozen=True)
class Fact:
    id: str
    conv: int
    text: str
    sources: tuple[str, ...]
    learned_at: datetime


@dataclass(frozen=True)
class Question:
    conv: int
    text: str
    evidence: tuple[str, ...]
    category: int


@dataclass
class Conversation:
    index: int
    facts: list[Fact]
    questions: list[Question]
    now: datetime

    @property
    def scope(self) -> Scope:
        """Each conversation is one user's memory."""
        return Scope.for_user(ORG, f"conversation-{self.index}")

    def new_facts(self) -> list[NewFact]:
        """The observations as the engine ingests them: events, certain, learned that day."""
        return [
            NewFact(
                text=f.text,
                category=FactCategory.EVENT,
                confidence=1.0,
                source_ids=f.sources,
                learned_at=f.learned_at,
            )
            for f in self.facts
        ]


def session_date(raw: str) -> datetime:
    return datetime.strptime(raw.strip(), DATE_FORMAT).replace(tzinfo=UTC)


def load(path: Path) -> list[Conversation]:
    """Facts and answerable questions per conversation; malformed records are reported."""
    data = json.loads(path.read_text())
    out = []
    for index, sample in enumerate(data):
        dialogue = sample["conversation"]
        facts: list[Fact] = []
        dates = []
        for session_key, by_speaker in sample["observation"].items():
            number = session_key.removeprefix("session_").removesuffix("_observation")
            learned_at = session_date(dialogue[f"session_{number}_date_time"])
            dates.append(learned_at)
            for items in by_speaker.values():
                for text, evidence in items:
                    sources = (evidence,) if isinstance(evidence, str) else tuple(evidence)
                    facts.append(Fact(f"{index}:{len(facts)}", index, text, sources, learned_at))
        questions = [
            Question(index, qa["question"], tuple(qa["evidence"]), int(qa["category"]))
            for qa in sample["qa"]
            if int(qa["category"]) in CATEGORIES and qa.get("evidence")
        ]
        # Questions are asked after the last session.
        out.append(Conversation(index, facts, questions, max(dates) + timedelta(days=1)))
    return out


class PrecomputedEmbeddings(Embeddings):
    """Serves vectors computed up front, so timing a search never includes the model; keeps
    the model's measured relevance floor, which recall reads from the embedder."""

    def __init__(self, vectors: dict[str, list[float]], fallback: Embeddings) -> None:
        self.vectors = vectors
        self.fallback = fallback
        self.relevance_floor = getattr(fallback, RELEVANCE_FLOOR_ATTRIBUTE, None)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        missing = [t for t in texts if t not in self.vectors]
        if missing:
            self.vectors.update(zip(missing, embed_texts(self.fallback, missing), strict=True))
        return [self.vectors[t] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        if text not in self.vectors:
            self.vectors[text] = self.fallback.embed_query(text)
        return self.vectors[text]


def score(
    questions: Sequence[Question], results: Sequence[Sequence[tuple[str, ...]]]
) -> dict[str, Any]:
    """recall@5, recall@10 and hit@5 over questions, overall and per category."""

    def metrics(pairs: list[tuple[Question, Sequence[tuple[str, ...]]]]) -> dict[str, float]:
        r5, r10, h5 = [], [], []
        for question, sources in pairs:
            wanted = set(question.evidence)
            top5 = set().union(*sources[:5]) if sources else set()
            top10 = set().union(*sources[:10]) if sources else set()
            r5.append(len(wanted & top5) / len(wanted))
            r10.append(len(wanted & top10) / len(wanted))
            h5.append(1.0 if wanted & top5 else 0.0)
        return {
            "recall_at_5": round(statistics.fmean(r5), 4),
            "recall_at_10": round(statistics.fmean(r10), 4),
            "hit_at_5": round(statistics.fmean(h5), 4),
            "questions": len(pairs),
        }

    pairs = list(zip(questions, results, strict=True))
    out = metrics(pairs)
    out["by_category"] = {
        name: metrics([p for p in pairs if p[0].category == number])
        for number, name in CATEGORIES.items()
        if any(p[0].category == number for p in pairs)
    }
    return out


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def run_system(
    conversations: Sequence[Conversation],
    recall: Callable[[Conversation, Question], list[tuple[str, ...]]],
    label: str = "",
) -> dict[str, Any]:
    if label:
        print(f"  running {label}", file=sys.stderr, flush=True)
    questions, results, timings = [], [], []
    for conv in conversations:
        for question in conv.questions:
            started = time.perf_counter()
            sources = recall(conv, question)
            timings.append((time.perf_counter() - started) * 1000)
            questions.append(question)
            results.append(sources)
    out = score(questions, results)
    out["latency_ms_p50"] = round(statistics.median(timings), 3)
    out["latency_ms_p95"] = round(percentile(timings, 0.95), 3)
    out["_per_question"] = per_question_recall(questions, results)
    return out


def per_question_recall(
    questions: Sequence[Question], results: Sequence[Sequence[tuple[str, ...]]]
) -> list[float]:
    """recall@5 of each question, in order, for paired comparisons."""
    out = []
    for question, sources in zip(questions, results, strict=True):
        wanted = set(question.evidence)
        top5 = set().union(*sources[:5]) if sources else set()
        out.append(len(wanted & top5) / len(wanted))
    return out


def paired_bootstrap(
    ours: Sequence[float], theirs: Sequence[float], rounds: int = 2000, seed: int = 7
) -> dict[str, float]:
    """Mean difference and its 95% percentile interval, resampling questions with pairs kept."""
    import numpy as np

    diff = np.asarray(ours, dtype=np.float64) - np.asarray(theirs, dtype=np.float64)
    rng = np.random.default_rng(seed)
    means = diff[rng.integers(0, len(diff), size=(rounds, len(diff)))].mean(axis=1)
    return {
        "diff": round(float(diff.mean()), 4),
        "ci95_low": round(float(np.percentile(means, 2.5)), 4),
        "ci95_high": round(float(np.percentile(means, 97.5)), 4),
    }


def _indices(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, default=None, help=f"locomo_dev.json (default: {DEFAULT_DATA})"
    )
    parser.add_argument("--json", type=Path, required=True, help="where to write results")
    parser.add_argument("--embeddings", default=None, help="offline | minilm | provider:model")
    parser.add_argument("--rerank-limit", type=int, default=DEFAULT_RERANK_LIMIT)
    parser.add_argument("--no-ablation", action="store_true", help="skip the ablation rows")
    parser.add_argument(
        "--no-cross-encoder", action="store_true", help="skip the slow cross-encoder system"
    )
    parser.add_argument(
        "--latency-only", action="store_true",
        help="only the default path's warm and cold latency on the report conversations",
    )  # fmt: skip
    parser.add_argument(
        "--pool-sizes", type=int, nargs="*", default=[20, 60],
        help="ablation: rerank this many fused candidates (candidate lists at least as long)",
    )  # fmt: skip
    parser.add_argument("--conversations", type=int, default=0, help="only the first N")
    parser.add_argument(
        "--tune", type=_indices, default=[0, 1, 2], help="conversations to tune on (0-based)"
    )
    parser.add_argument(
        "--report", type=_indices, default=[3, 4, 5], help="conversations to report (0-based)"
    )
    args = parser.parse_args(argv)
    if args.data is None:
        args.data = Path(__file__).resolve().parents[1] / DEFAULT_DATA
        if not args.data.is_file():
            print(f"bench.locomo skipped: no LoCoMo data at {DEFAULT_DATA}; pass --data PATH")
            return 0
    if not args.data.is_file():
        parser.error(f"--data {args.data} is not a file (see the data folder's README)")

    conversations = load(args.data)
    if args.conversations:
        conversations = conversations[: args.conversations]
    known = range(len(conversations))
    args.tune = [i for i in args.tune if i in known]
    args.report = [i for i in args.report if i in known] or list(known)
    if set(args.tune) & set(args.report):
        parser.error("--tune and --report must not share a conversation")
    name = embeddings_name(args.embeddings)
    embedder = init_embeddings(name)
    if embedder is None:
        parser.error("this benchmark compares vector search; choose an embedder")
    facts = [fact for conv in conversations for fact in conv.facts]
    questions = [q for conv in conversations for q in conv.questions]

    started = time.perf_counter()
    fact_vectors = embed_texts(embedder, [f.text for f in facts])
    embed_docs_s = time.perf_counter() - started
    query_ms = []
    query_vectors: dict[str, list[float]] = {}
    for question in questions:
        t0 = time.perf_counter()
        query_vectors[question.text] = embedder.embed_query(question.text)
        query_ms.append((time.perf_counter() - t0) * 1000)
    dims = len(fact_vectors[0])
    rerankers = _try_rerankers()

    admin = resolve_uri(announce=False)
    dbname = f"bench_locomo_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{dbname}"')
    uri = with_database(admin, dbname)
    try:
        systems, ablation, tuning, cold_warm = _run_all(
            uri,
            conversations,
            facts,
            fact_vectors,
            query_vectors,
            embedder,
            dims,
            rerankers,
            args,
        )
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')

    report = {
        "data": args.data.name,
        "conversations": len(conversations),
        "tune_conversations": args.tune,
        "report_conversations": args.report,
        "facts": len(facts),
        "questions": len(questions),
        "embeddings": name,
        "embed_documents_per_s": round(len(facts) / embed_docs_s, 1),
        "embed_query_ms_p50": round(statistics.median(query_ms), 3),
        "embed_query_ms_p95": round(percentile(query_ms, 0.95), 3),
        "reranker": CROSS_ENCODER if CROSS_ENCODER in rerankers else None,
        "rerank_limit": args.rerank_limit if rerankers else 0,
        "systems": systems,
        "ablation": ablation,
        "tuning": tuning,
        "cold_vs_warm": cold_warm,
    }
    per_question = {name: row.pop("_per_question") for name, row in systems.items()}
    report["ci_vs_stock"] = {
        name: paired_bootstrap(values, per_question["stock"])
        for name, values in per_question.items()
        if name != "stock" and "stock" in per_question
    }
    if "stock" in systems and "fulltext" in systems:
        best_stock = max(systems["stock"]["recall_at_5"], systems["fulltext"]["recall_at_5"])
        best_ours = systems.get("recollect", systems.get("recollect_default", systems["fulltext"]))
        report["recollect_minus_best_baseline_recall_at_5"] = round(
            best_ours["recall_at_5"] - best_stock, 4
        )
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    _print_table(report)
    return 0


def _try_rerankers() -> dict[str, Reranker]:
    """Both packaged rerankers, or none when the `rerank` extra is missing."""
    out: dict[str, Reranker] = {}
    for name in (CROSS_ENCODER, LATE_INTERACTION):
        try:
            reranker = load_reranker(name)
        except ValueError as exc:
            print(f"note: no {name} reranker ({exc})", file=sys.stderr)
            return {}
        if reranker is not None:
            out[name] = reranker
    return out


def _run_all(
    uri: str,
    conversations: Sequence[Conversation],
    facts: Sequence[Fact],
    fact_vectors: Sequence[Sequence[float]],
    query_vectors: dict[str, list[float]],
    embedder: Embeddings,
    dims: int,
    rerankers: dict[str, Reranker],
    args: argparse.Namespace,
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], dict[str, Any]]:
    from langgraph.store.base import PutOp
    from langgraph.store.postgres import PostgresStore

    cached = PrecomputedEmbeddings(
        {**{f.text: list(v) for f, v in zip(facts, fact_vectors, strict=True)}, **query_vectors},
        embedder,
    )
    reported = [c for c in conversations if c.index in args.report]
    tuned = [c for c in conversations if c.index in args.tune]
    systems: dict[str, Any] = {}
    with psycopg.connect(uri, **CONNECTION_KWARGS) as conn:
        store = PostgresStore(conn, index={"dims": dims, "embed": cached, "fields": ["text"]})
        store.setup()
        ops = [
            PutOp(("locomo", str(f.conv)), f.id, {"text": f.text, "sources": list(f.sources)})
            for f in facts
        ]
        for start in range(0, len(ops), 500):
            store.batch(ops[start : start + 500])

        def stock(conv: Conversation, q: Question) -> list[tuple[str, ...]]:
            items = store.search(("locomo", str(conv.index)), query=q.text, limit=10)
            return [tuple(item.value["sources"]) for item in items]

        if not args.latency_only:
            systems["stock"] = run_system(reported, stock, "stock")

    migrate(uri)
    pool = open_pool(app_uri(uri), max_size=2, name="bench-locomo")
    try:
        # Ingesting stores every fact's late-interaction encoding after the import commits.
        memory = LongTermMemory(pool, embedder=cached, reranker=rerankers.get(LATE_INTERACTION))
        vector_of = {f.id: v for f, v in zip(facts, fact_vectors, strict=True)}
        for conv in conversations:
            memory.ingest(conv.scope, conv.new_facts(), [vector_of[f.id] for f in conv.facts])
        with psycopg.connect(uri, autocommit=True) as conn:
            conn.execute("ANALYZE facts")
            conn.execute("ANALYZE fact_encodings")
        if args.latency_only:
            return {}, {}, {}, _cold_vs_warm(memory, reported, query_vectors, rerankers)
        tuning = _tune(memory, tuned, query_vectors, rerankers) if tuned and rerankers else {}
        systems |= _engine_systems(memory, reported, query_vectors, rerankers, args)
        cold_warm = _cold_vs_warm(memory, reported, query_vectors, rerankers)
    finally:
        pool.close()
    ablation = systems.pop("_ablation")
    return systems, ablation, tuning, cold_warm


def _recaller(
    memory: LongTermMemory,
    recipe: RecallRecipe,
    reranker: Reranker | None,
    query_vectors: dict[str, list[float]],
) -> Callable[[Conversation, Question], list[tuple[str, ...]]]:
    engine = replace_reranker(memory, reranker)

    def recall(conv: Conversation, q: Question) -> list[tuple[str, ...]]:
        found = engine.recall(
            conv.scope, q.text, recipe=recipe, now=conv.now, query_embedding=query_vectors[q.text]
        )
        return [item.fact.source_ids for item in found.facts]

    return recall


TUNING_GRID = {
    "min_similarity": [NO_FLOOR, 0.80, 0.82, 0.84, 0.86],
    "rerank_limit": [20, 40, 60],
    "rerank_weight": [0.75, 0.9],
}


def default_recipe(**changes: Any) -> RecallRecipe:
    """The recipe a user gets by default (`configured_memory`), with k=10 for recall@10."""
    limit = changes.get("rerank_limit", DEFAULT_RERANK_LIMIT)
    pools = {"dense_limit": max(limit, 50), "lexical_limit": max(limit, 50)}
    return replace(RecallRecipe(k=10, rerank_limit=DEFAULT_RERANK_LIMIT, **pools), **changes)


def _tune(
    memory: LongTermMemory,
    tuned: Sequence[Conversation],
    query_vectors: dict[str, list[float]],
    rerankers: dict[str, Reranker],
) -> dict[str, Any]:
    """One constant at a time around the defaults, on the tuning conversations only."""
    late = rerankers[LATE_INTERACTION]
    out: dict[str, Any] = {"conversations": [c.index for c in tuned]}
    for name, values in TUNING_GRID.items():
        rows = {}
        for value in values:
            recipe = default_recipe(**{name: value})
            row = run_system(
                tuned, _recaller(memory, recipe, late, query_vectors), f"{name}={value}"
            )
            rows[str(value)] = {key: row[key] for key in ("recall_at_5", "recall_at_10")}
            if name == "min_similarity":
                rows[str(value)]["junk_queries_with_facts"] = _junk_share(
                    memory, tuned, recipe, late
                )
        out[name] = rows
    return out


JUNK_QUERIES = (
    "the and of", "is it", "what is it", "and then what", "Hmm, okay.", "tell me",
    "What is the capital of Mongolia?", "How do I compile a Linux kernel?",
    "Explain quantum chromodynamics", "Convert 30 degrees Celsius to Fahrenheit",
)  # fmt: skip
"""Stop-word-only and off-topic queries: a good floor lets none of them inject a fact."""


def _junk_share(
    memory: LongTermMemory, convs: Sequence[Conversation], recipe: RecallRecipe, late: Reranker
) -> float:
    engine = replace_reranker(memory, late)
    hits = [
        bool(engine.recall(c.scope, q, recipe=recipe, now=c.now).facts)
        for c in convs
        for q in JUNK_QUERIES
    ]
    return round(sum(hits) / len(hits), 3)


def _cold_vs_warm(
    memory: LongTermMemory,
    reported: Sequence[Conversation],
    query_vectors: dict[str, list[float]],
    rerankers: dict[str, Reranker],
) -> dict[str, Any]:
    """The default path with an empty late-interaction cache before every question (so each
    recall reads its head's encodings from `fact_encodings`) against the warm cache."""
    late = rerankers.get(LATE_INTERACTION)
    if not isinstance(late, LateInteractionReranker):
        return {}
    warm_recall = _recaller(memory, default_recipe(), late, query_vectors)

    def cold_recall(conv: Conversation, q: Question) -> list[tuple[str, ...]]:
        late.clear()
        return warm_recall(conv, q)

    rows = {}
    for label, recall in (
        ("warm", warm_recall),
        ("cold", cold_recall),
        ("warm_again", warm_recall),
    ):
        row = run_system(reported, recall, f"default, {label}")
        rows[label] = {key: row[key] for key in ("recall_at_5", "latency_ms_p50", "latency_ms_p95")}
    rows["cold_over_warm_p50"] = round(
        rows["cold"]["latency_ms_p50"] / rows["warm_again"]["latency_ms_p50"], 3
    )
    rows["cold_over_warm_p95"] = round(
        rows["cold"]["latency_ms_p95"] / rows["warm_again"]["latency_ms_p95"], 3
    )
    return rows


def _engine_systems(
    memory: LongTermMemory,
    conversations: Sequence[Conversation],
    query_vectors: dict[str, list[float]],
    rerankers: dict[str, Reranker],
    args: argparse.Namespace,
) -> dict[str, Any]:
    def ours(
        recipe: RecallRecipe, reranker: str | None = None
    ) -> Callable[[Conversation, Question], list[tuple[str, ...]]]:
        return _recaller(
            memory, recipe, rerankers.get(reranker) if reranker else None, query_vectors
        )

    systems: dict[str, Any] = {}
    default = RecallRecipe(k=10, min_similarity=NO_FLOOR)
    lexical_only = replace(
        default, methods=(Method.LEXICAL,), recency_weight=0.0, confidence_weight=0.0
    )
    systems["fulltext"] = run_system(conversations, ours(lexical_only), "fulltext")
    if rerankers:
        systems["recollect_default"] = run_system(
            conversations, ours(default_recipe(), LATE_INTERACTION), "recollect_default"
        )
    limit = args.rerank_limit if rerankers else 0
    pool_limits = {"dense_limit": max(limit, 50), "lexical_limit": max(limit, 50)}
    reranked = replace(default, rerank_limit=limit, **pool_limits)
    if not args.no_cross_encoder:
        systems["recollect"] = run_system(
            conversations, ours(reranked, CROSS_ENCODER), "recollect (cross-encoder)"
        )
    if rerankers:  # the shipped default (late interaction) through BaseStore.search
        systems["recollect_store"] = recollect_store_system(
            memory, conversations, default_recipe(), rerankers.get(LATE_INTERACTION)
        )
    if rerankers:
        systems["recollect_late_interaction"] = run_system(
            conversations, ours(reranked, LATE_INTERACTION), "recollect_late_interaction"
        )
    systems["recollect_no_rerank"] = run_system(conversations, ours(default), "recollect_no_rerank")

    ablation: dict[str, Any] = {}
    if not args.no_ablation:
        plain = replace(default, recency_weight=0.0, confidence_weight=0.0)
        steps: list[tuple[str, RecallRecipe, str | None]] = [
            ("dense_only", replace(plain, methods=(Method.DENSE,)), None),
            ("dense+fulltext_rrf_any_word", plain, None),
        ]
        if rerankers:
            plain_reranked = replace(plain, rerank_limit=limit, **pool_limits)
            steps.append(("+late_interaction", plain_reranked, LATE_INTERACTION))
            steps.append(("+cross_encoder", plain_reranked, CROSS_ENCODER))
            for size in args.pool_sizes:
                sized = replace(reranked, dense_limit=max(size, 50), lexical_limit=max(size, 50))
                steps.append(
                    (f"recollect_rerank{size}", replace(sized, rerank_limit=size), CROSS_ENCODER)
                )
        for label, recipe, reranker in steps:
            row = run_system(conversations, ours(recipe, reranker), label)
            ablation[label] = {key: row[key] for key in _SUMMARY_KEYS}
        final = systems["recollect"]
        ablation["+recency_confidence (= recollect)"] = {key: final[key] for key in _SUMMARY_KEYS}
    systems["_ablation"] = ablation
    return systems


def recollect_store_system(
    memory: LongTermMemory,
    conversations: Sequence[Conversation],
    recipe: RecallRecipe,
    reranker: Reranker | None,
) -> dict[str, Any]:
    """`recollect` through LangGraph's `BaseStore.search` (`RecollectStore`): the same facts,
    ranked by the store's calibrated similarity instead of the engine's recall. Each question
    is asked of the engine and of the store, in alternating order, so recall@k is compared
    answer for answer and the overhead on equal terms."""
    from recollect.basestore.store import RecollectStore

    print("  running recollect_store (beside the engine)", file=sys.stderr, flush=True)
    engine = LongTermMemory(memory.pool, embedder=memory.embedder, recipe=recipe,
                            reranker=reranker)  # fmt: skip
    store = RecollectStore(engine)
    questions: list[Question] = []
    via_store: list[list[tuple[str, ...]]] = []
    via_engine: list[list[tuple[str, ...]]] = []
    store_ms: list[float] = []
    engine_ms: list[float] = []
    for conv in conversations:
        namespace = (conv.scope.org_id, conv.scope.user_id, "facts")
        for number, q in enumerate(conv.questions):
            for side in (0, 1) if number % 2 == 0 else (1, 0):
                started = time.perf_counter()
                if side == 0:
                    found = engine.recall(conv.scope, q.text, now=conv.now).facts
                    engine_ms.append((time.perf_counter() - started) * 1000)
                    via_engine.append([r.fact.source_ids for r in found])
                else:
                    items = store.search(namespace, query=q.text, limit=recipe.k)
                    store_ms.append((time.perf_counter() - started) * 1000)
                    via_store.append([tuple(i.value["source_ids"]) for i in items])
            questions.append(q)
    out = score(questions, via_store)
    out["_per_question"] = per_question_recall(questions, via_store)
    out["latency_ms_p50"] = round(statistics.median(store_ms), 3)
    out["latency_ms_p95"] = round(percentile(store_ms, 0.95), 3)
    engine_row = score(questions, via_engine)
    out["engine_recall_at_5"] = engine_row["recall_at_5"]
    out["same_top_k_as_engine"] = round(
        statistics.fmean(a == b for a, b in zip(via_store, via_engine, strict=True)), 4
    )
    out["engine_latency_ms_p50"] = round(statistics.median(engine_ms), 3)
    out["overhead_p50"] = round(out["latency_ms_p50"] / out["engine_latency_ms_p50"] - 1, 4)
    return out


def replace_reranker(memory: LongTermMemory, reranker: Reranker | None) -> LongTermMemory:
    """The same engine and pool with another reranker (models are shared, not reloaded)."""
    return LongTermMemory(
        memory.pool, embedder=memory.embedder, recipe=memory.recipe, reranker=reranker
    )


_SUMMARY_KEYS = ("recall_at_5", "recall_at_10", "hit_at_5", "latency_ms_p50", "latency_ms_p95")


def _print_table(report: dict[str, Any]) -> None:
    print(
        f"LoCoMo {report['data']}: {report['conversations']} conversations, "
        f"{report['facts']} facts, {report['questions']} questions; embeddings "
        f"{report['embeddings']} ({report['embed_documents_per_s']} docs/s, query p50 "
        f"{report['embed_query_ms_p50']} ms); reranker {report['reranker']} "
        f"(top {report['rerank_limit']})"
    )
    header = f"{'system':34} {'R@5':>7} {'R@10':>7} {'hit@5':>7} {'p50 ms':>8} {'p95 ms':>8}"
    for title, rows in (("systems", report["systems"]), ("ablation", report["ablation"])):
        if not rows:
            continue
        print(f"\n{title}\n{header}")
        for name, row in rows.items():
            print(
                f"{name:34} {row['recall_at_5']:7.3f} {row['recall_at_10']:7.3f} "
                f"{row['hit_at_5']:7.3f} {row['latency_ms_p50']:8.2f} {row['latency_ms_p95']:8.2f}"
            )
    for name in ("recollect", "recollect_default"):
        if name in report["systems"]:
            cats = report["systems"][name]["by_category"]
            print(
                f"\n{name} by category: "
                + ", ".join(f"{k} {v['recall_at_5']:.3f}" for k, v in cats.items())
            )
    if "recollect_minus_best_baseline_recall_at_5" in report:
        print(
            "recollect - best baseline, recall@5: "
            f"{report['recollect_minus_best_baseline_recall_at_5']:+.3f}"
        )
    print(f"\nreported on conversations {report['report_conversations']}; recall@5 - stock:")
    for name, ci in report.get("ci_vs_stock", {}).items():
        print(
            f"  {name:32} {ci['diff']:+.4f}  95% CI [{ci['ci95_low']:+.4f}, {ci['ci95_high']:+.4f}]"
        )
    cold_warm = report["cold_vs_warm"]
    if cold_warm:
        for label in ("warm", "cold", "warm_again"):
            row = cold_warm[label]
            print(
                f"default path, {label:10} p50 {row['latency_ms_p50']:7.2f} ms, "
                f"p95 {row['latency_ms_p95']:7.2f} ms"
            )
        print(
            f"default path cold/warm: p50 {cold_warm['cold_over_warm_p50']}x, "
            f"p95 {cold_warm['cold_over_warm_p95']}x"
        )


if __name__ == "__main__":
    sys.exit(main())
