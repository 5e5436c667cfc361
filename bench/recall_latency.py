"""Recall latency at 1,000,000 facts across 10,000 users: recollect vs stock `PostgresStore`.

Both systems hold the same facts (synthetic text, seeded random unit vectors standing in for
precomputed embeddings) in one Postgres. Latency is per call, excluding the query's embedding
(both get the query vector precomputed), for users with 100, 10,000 and 100,000 facts (stock's
exact scan is left out for the last: seconds a query), beside the dense stage's top-40 overlap
with an exact scan of the same user. Ingest throughput is measured through each system's own
write path: recollect's COPY-based `ingest` for every fact, stock's `batch(PutOp...)` on a
sample (the rest of stock's rows are bulk-loaded so the comparison can run at full size, then
its index is built as `setup()` defines it).

    python -m bench.recall_latency --json bench/out/recall_latency.json
    python -m bench.recall_latency --facts 150000 --users 500 --large-user-facts 10000 --json o.json

`--cone A` moves every vector (facts and queries) toward one shared direction, `A` times its
length, as a sentence embedder's vectors lie in one narrow cone (1.7 gives two unrelated vectors
a cosine of about 0.75, as the offline embedder does): their binary codes then share most signs,
and recall ranks a large user exactly (`fact_sql.CODES_SPREAD`).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import string
import tempfile
import time
import uuid
from array import array
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
from langgraph.store.base import PutOp
from langgraph.store.postgres import PostgresStore
from pgvector import Vector
from pgvector.psycopg import register_vector
from psycopg.types.json import Jsonb

from recollect.longterm import fact_sql
from recollect.longterm.facts import LongTermMemory
from recollect.longterm.recipe import RecallRecipe
from recollect.longterm.records import FactCategory, NewFact
from recollect.longterm.vectors import literal
from recollect.store import migrations
from recollect.store.roles import app_uri
from recollect.store.scope import Scope, ScopeKind
from recollect.store.server import CONNECTION_KWARGS, open_pool, start_embedded

ORG = "bench"
OVERLAP_TOP = 40
"""The dense candidates compared with the exact scan's: the reranked head's size."""
SIZED = 3
"""The first users are the measured ones: 10,000 facts, 100 facts and 100,000 facts."""
MEASURED = (("small", 1), ("large", 0), ("huge", 2))
CATEGORIES = list(FactCategory)

ANN_INDEX = """
CREATE INDEX IF NOT EXISTS facts_embedding_hnsw ON facts
USING hnsw ((embedding::vector({dim})) vector_cosine_ops)
WHERE vector_dims(embedding) = {dim} AND superseded_by IS NULL AND deleted_at IS NULL
"""
"""The alternative to the exact per-user scan: one ANN index over every tenant's vectors."""
ANN_DENSE = """
SELECT id FROM facts
WHERE org_id = %(org_id)s AND user_id = %(user_id)s AND session_id IS NULL
  AND superseded_by IS NULL AND deleted_at IS NULL AND vector_dims(embedding) = {dim}
ORDER BY embedding::vector({dim}) <=> %(vector)s::vector({dim})
LIMIT %(limit)s
"""
EXACT_DENSE = """
SELECT id FROM facts
WHERE org_id = %(org_id)s AND user_id = %(user_id)s AND session_id IS NULL
  AND superseded_by IS NULL AND deleted_at IS NULL
  AND vector_dims(embedding) <= 512 AND vector_dims(embedding) = {dim}
ORDER BY embedding <=> %(vector)s::vector
LIMIT %(limit)s
"""


def unit_vectors(rng: random.Random, count: int, dim: int) -> list[array[float]]:
    """Seeded random directions; later perturbed per fact so no two facts share a vector."""
    out = []
    for _ in range(count):
        v = [rng.gauss(0.0, 1.0) for _ in range(dim)]
        norm = sum(x * x for x in v) ** 0.5
        out.append(array("f", [x / norm for x in v]))
    return out


class Corpus:
    """Deterministic synthetic facts: user → list of (text, vector, category, learned_at)."""

    def __init__(
        self,
        facts: int,
        users: int,
        dim: int,
        seed: int = 7,
        large: int | None = None,
        huge: int = 100_000,
        cone: float = 0.0,
    ) -> None:
        self.rng = random.Random(seed)
        self.dim = dim
        self.cone = (
            [cone * x for x in unit_vectors(random.Random(seed + 1), 1, dim)[0]] if cone else []
        )
        self.vocab = ["".join(self.rng.choices(string.ascii_lowercase, k=self.rng.randint(3, 9)))
                      for _ in range(5000)]  # fmt: skip
        self.base = unit_vectors(self.rng, 2048, dim)
        self.large_n = large or max(1, facts // 100)
        self.small_n = min(100, max(1, facts // users))
        self.huge_n = huge
        rest = facts - self.large_n - self.small_n - self.huge_n
        others = users - 3
        if rest < others:
            raise ValueError("--facts must leave at least one fact to every other user")
        self.sizes = [self.large_n, self.small_n, self.huge_n] + [
            rest // others + (1 if i < rest % others else 0) for i in range(others)
        ]
        self.users = [f"u{i:05d}" for i in range(users)]
        self.now = datetime.now(UTC)

    def text(self, rng: random.Random) -> str:
        return " ".join(rng.choices(self.vocab, k=rng.randint(6, 14)))

    def vector(self, rng: random.Random) -> Vector:
        v = array("f", self.base[rng.randrange(len(self.base))])
        for _ in range(8):
            v[rng.randrange(self.dim)] = rng.gauss(0.0, 1.0 / self.dim**0.5)
        if not self.cone:
            return Vector(v.tolist())
        shifted = [x + c for x, c in zip(v, self.cone, strict=True)]
        norm = math.sqrt(sum(x * x for x in shifted))
        return Vector([x / norm for x in shifted])

    def user_facts(self, index: int) -> list[tuple[str, Vector, FactCategory, datetime]]:
        rng = random.Random(index * 7919 + 1)
        return [
            (
                self.text(rng),
                self.vector(rng),
                CATEGORIES[rng.randrange(len(CATEGORIES))],
                self.now - timedelta(days=rng.uniform(0, 720)),
            )
            for _ in range(self.sizes[index])
        ]

    def queries(self, count: int, seed: int) -> list[tuple[str, list[float]]]:
        rng = random.Random(seed)
        return [
            (" ".join(rng.choices(self.vocab, k=rng.randint(2, 5))), self.vector(rng).to_list())
            for _ in range(count)
        ]


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def ingest_recollect(memory: LongTermMemory, corpus: Corpus) -> float:
    """All facts through `LongTermMemory.ingest`, one COPY per user; returns facts/s."""
    elapsed = 0.0
    total = 0
    for index, user in enumerate(corpus.users):
        rows = corpus.user_facts(index)
        facts = [NewFact(text=t, category=c, learned_at=at, confidence=0.8) for t, _, c, at in rows]
        vectors = [v for _, v, _, _ in rows]
        start = time.perf_counter()
        total += memory.ingest(Scope.for_user(ORG, user), facts, embeddings=vectors)
        elapsed += time.perf_counter() - start
        if index % 1000 == 0:
            print(f"  recollect ingest: {total:,} facts, {total / max(elapsed, 1e-9):,.0f}/s")
    return total / elapsed


class StockEmbed:
    """Stock's embedding hook, answering from the precomputed vectors (embedding time excluded)."""

    def __init__(self) -> None:
        self.known: dict[str, list[float]] = {}

    def __call__(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.known[t] for t in texts]


def stock_index_config(dim: int, kind: str, embed: StockEmbed) -> Any:
    return {"dims": dim, "embed": embed, "fields": ["text"], "ann_index_config": {"kind": kind}}


def ingest_stock(uri: str, corpus: Corpus, kind: str, sample: int) -> tuple[float, float]:
    """Stock's own `batch` for `sample` facts (facts/s), then a bulk load of the rest.

    Returns (facts/s through stock's write path, seconds to build stock's ANN index).
    """
    embed = StockEmbed()
    with psycopg.connect(uri, **CONNECTION_KWARGS) as conn:
        store = PostgresStore(conn, index=stock_index_config(corpus.dim, kind, embed))
        store.setup()
        # stock's own write path, on a sample of users, with its index as setup() made it
        done = 0
        elapsed = 0.0
        loaded_users = 0
        for index, user in enumerate(corpus.users[SIZED:], start=SIZED):
            if done >= sample:
                break
            rows = corpus.user_facts(index)
            ops = []
            for text, vector, category, _ in rows:
                embed.known[text] = vector.to_list()
                ops.append(PutOp(("facts", ORG, user), uuid.uuid4().hex,
                                 {"text": text, "category": str(category)}))  # fmt: skip
            start = time.perf_counter()
            store.batch(ops)
            elapsed += time.perf_counter() - start
            embed.known.clear()
            done += len(ops)
            loaded_users = index + 1
        stock_rate = done / elapsed if elapsed else 0.0
        print(f"  stock batch(PutOp): {done:,} facts, {stock_rate:,.0f}/s")
        if kind != "flat":  # bulk-load without it, then build it once (faster than inserts)
            conn.execute("DROP INDEX IF EXISTS store_vectors_embedding_idx")
        register_vector(conn)
        skip = set(range(SIZED, loaded_users))
        with conn.cursor() as cur:
            for index, user in enumerate(corpus.users):
                if index in skip:
                    continue
                rows = corpus.user_facts(index)
                prefix = f"facts.{ORG}.{user}"
                keys = [uuid.uuid4().hex for _ in rows]
                with cur.copy("COPY store (prefix, key, value) FROM STDIN (FORMAT BINARY)") as cp:
                    cp.set_types(["text", "text", "jsonb"])
                    for key, (text, _, category, _) in zip(keys, rows, strict=True):
                        cp.write_row((prefix, key, Jsonb({"text": text, "category": category})))
                with cur.copy(
                    "COPY store_vectors (prefix, key, field_name, embedding) "
                    "FROM STDIN (FORMAT BINARY)"
                ) as cp:
                    cp.set_types(["text", "text", "text", "vector"])
                    for key, (_, vector, _, _) in zip(keys, rows, strict=True):
                        cp.write_row((prefix, key, "text", vector))
                if index % 1000 == 0:
                    print(f"  stock bulk load: user {index:,}")
        build_s = 0.0
        if kind != "flat":
            print(f"  building stock's {kind} index (as its setup() defines it) ...")
            conn.execute("SET maintenance_work_mem = '4GB'")
            start = time.perf_counter()
            conn.execute(
                "DELETE FROM store_migrations WHERE v = (SELECT max(v) FROM store_migrations)"
            )
            # re-run stock's own vector migration, which creates the index
            conn.execute(
                "DELETE FROM vector_migrations WHERE v = (SELECT max(v) FROM vector_migrations)"
            )
            PostgresStore(conn, index=stock_index_config(corpus.dim, kind, embed)).setup()
            build_s = time.perf_counter() - start
            print(f"  stock index built in {build_s:,.0f} s")
        conn.execute("VACUUM ANALYZE store")
        conn.execute("VACUUM ANALYZE store_vectors")
    return stock_rate, build_s


def measure(
    calls: dict[str, Callable[[str, list[float]], int]],
    queries: list[tuple[str, list[float]]],
    warmup: int,
) -> dict[str, tuple[list[float], list[int]]]:
    """Interleave the systems query by query, so machine noise hits both alike."""
    out: dict[str, tuple[list[float], list[int]]] = {name: ([], []) for name in calls}
    for i, (text, vector) in enumerate(queries):
        for name, call in calls.items():
            start = time.perf_counter()
            returned = call(text, vector)
            ms = (time.perf_counter() - start) * 1000
            if i >= warmup:
                out[name][0].append(ms)
                out[name][1].append(returned)
    return out


def ann_versus_exact(uri: str, corpus: Corpus, queries: int, limit: int = 50) -> dict[str, Any]:
    """Dense candidates alone: the exact per-user scan against a global HNSW index."""
    out: dict[str, Any] = {}
    with psycopg.connect(uri, **CONNECTION_KWARGS) as conn:
        conn.execute("SET maintenance_work_mem = '4GB'")
        print("  building an HNSW index over every tenant's vectors ...")
        start = time.perf_counter()
        conn.execute(ANN_INDEX.format(dim=corpus.dim))
        out["ann_index_build_s"] = round(time.perf_counter() - start, 1)
        conn.execute("ANALYZE facts")
        for size, user in (("small", corpus.users[1]), ("large", corpus.users[0])):
            exact_ms, ann_ms, overlap, returned = [], [], [], []
            for i, (_, vector) in enumerate(corpus.queries(queries, seed=99)):
                params = {"org_id": ORG, "user_id": user, "vector": literal(vector), "limit": limit}
                t0 = time.perf_counter()
                exact = [r["id"] for r in conn.execute(EXACT_DENSE.format(dim=corpus.dim), params)]
                t1 = time.perf_counter()
                with conn.transaction():
                    conn.execute(
                        "SET LOCAL enable_sort = off"
                    )  # make the planner take the ANN path
                    conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
                    ann = [r["id"] for r in conn.execute(ANN_DENSE.format(dim=corpus.dim), params)]
                t2 = time.perf_counter()
                if i >= 10:
                    exact_ms.append((t1 - t0) * 1000)
                    ann_ms.append((t2 - t1) * 1000)
                    overlap.append(len(set(exact) & set(ann)) / max(1, len(exact)))
                    returned.append(len(ann))
            out[size] = {
                "exact_p50_ms": round(statistics.median(exact_ms), 3),
                "exact_p95_ms": round(percentile(exact_ms, 0.95), 3),
                "ann_p50_ms": round(statistics.median(ann_ms), 3),
                "ann_p95_ms": round(percentile(ann_ms, 0.95), 3),
                "ann_recall_of_exact_top50": round(statistics.mean(overlap), 3),
                "ann_mean_results": round(statistics.mean(returned), 1),
            }
            print(f"  {size}: {out[size]}")
        conn.execute("DROP INDEX facts_embedding_hnsw")
    return out


def _ms(value: float | None) -> str:
    return f"{value:>10.2f}" if value is not None else f"{'-':>10}"


def dense_overlap(
    uri: str, corpus: Corpus, queries: int, top: int = OVERLAP_TOP
) -> dict[str, float]:
    """Per measured user, the share of the exact scan's top `top` that the engine's dense
    statement also returns in its top `top`: the one recall runs once it knows the user's size
    (every vector at half precision, or past `EXACT_UP_TO` the codes' cut and prefilter)."""
    out: dict[str, float] = {}
    with psycopg.connect(uri, **CONNECTION_KWARGS) as conn:
        register_vector(conn)
        for size, index in MEASURED:
            user = corpus.users[index]
            known = corpus.sizes[index]
            exact_read = known <= fact_sql.EXACT_UP_TO
            statement = fact_sql.DENSE_EXACT if exact_read else fact_sql.DENSE_CODED
            shares = []
            for _, vector in corpus.queries(queries, seed=len(size)):
                params = {"org_id": ORG, "user_id": user, "session_id": None,
                          "vector": Vector(vector), "dim": corpus.dim, "dense_limit": 50,
                          "limit": top, "now": datetime.now(UTC), "scope_size": known}  # fmt: skip
                exact = {r["id"] for r in conn.execute(EXACT_DENSE.format(dim=corpus.dim), params)}
                rows = conn.execute(statement[ScopeKind.USER], params).fetchall()
                facts = sorted(
                    (r for r in rows if r["kind"] == "fact"), key=lambda r: -r["similarity"]
                )
                found = {uuid.UUID(r["id"]) for r in facts[:top]}
                shares.append(len(exact & found) / max(1, len(exact)))
            out[size] = round(statistics.mean(shares), 4)
            print(f"  dense top-{top} overlap with the exact scan, {size} user: {out[size]}")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", required=True, help="where to write the results")
    parser.add_argument("--facts", type=int, default=1_000_000)
    parser.add_argument("--users", type=int, default=10_000)
    parser.add_argument(
        "--large-user-facts", type=int, default=None,
        help="facts of the large user (default: 1%% of --facts, 10,000 at full size)",
    )  # fmt: skip
    parser.add_argument("--huge-user-facts", type=int, default=100_000)
    parser.add_argument("--dim", type=int, default=384, help="the offline embedder's dimension")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument(
        "--cone", type=float, default=0.0,
        help="move every vector toward one shared direction, this many times its length",
    )  # fmt: skip
    parser.add_argument("--stock-index", choices=["hnsw", "ivfflat", "flat"], default="hnsw")
    parser.add_argument("--stock-put-sample", type=int, default=20_000)
    parser.add_argument("--data-dir", default=None, help="embedded server folder (default: temp)")
    parser.add_argument("--skip-ann", action="store_true", help="skip the ANN-vs-exact phase")
    parser.add_argument(
        "--reuse", action="store_true",
        help="measure again on the corpus a previous run loaded into --data-dir",
    )  # fmt: skip
    args = parser.parse_args(argv)

    folder = Path(args.data_dir or tempfile.mkdtemp(prefix="recall-latency-"))
    uri = start_embedded(folder, announce=True)
    with psycopg.connect(uri, **CONNECTION_KWARGS) as conn:
        migrations.setup(conn)
    corpus = Corpus(
        args.facts, args.users, args.dim,
        large=args.large_user_facts, huge=args.huge_user_facts, cone=args.cone,
    )  # fmt: skip
    print(f"{args.facts:,} facts, {args.users:,} users, dim {args.dim}; "
          f"large user {corpus.large_n:,} facts, huge user {corpus.huge_n:,}, "
          f"small user {corpus.small_n}")  # fmt: skip
    # The app's own role, behind row-level security, as every recall in production runs.
    pool = open_pool(app_uri(uri), max_size=2, name="bench")
    memory = LongTermMemory(pool, recipe=RecallRecipe(k=args.k))
    loaded = folder / "loaded.json"
    if args.reuse and loaded.exists():
        ingest = json.loads(loaded.read_text())
        print(f"reusing the corpus loaded in {folder} (ingest figures from that run)")
    else:
        with psycopg.connect(uri, **CONNECTION_KWARGS) as conn:
            conn.execute("TRUNCATE facts CASCADE")
            conn.execute("DROP TABLE IF EXISTS store_vectors, store, store_migrations, "
                         "vector_migrations CASCADE")  # fmt: skip
        started = time.perf_counter()
        ours_rate = ingest_recollect(memory, corpus)
        print(f"recollect ingest: {ours_rate:,.0f} facts/s "
              f"({time.perf_counter() - started:,.0f} s)")  # fmt: skip
        with psycopg.connect(uri, **CONNECTION_KWARGS) as conn:
            conn.execute("VACUUM ANALYZE facts")
        stock_rate, build_s = ingest_stock(uri, corpus, args.stock_index, args.stock_put_sample)
        ingest = {"recollect": ours_rate, "stock": stock_rate, "stock_index_build_s": build_s,
                  "facts": args.facts, "users": args.users, "dim": args.dim}  # fmt: skip
        loaded.write_text(json.dumps(ingest))
    ours_rate, stock_rate = ingest["recollect"], ingest["stock"]
    build_s = ingest["stock_index_build_s"]

    results: dict[str, Any] = {"stock": {}, "stock_exact": {}, "recollect": {}}
    embed = StockEmbed()
    with (
        psycopg.connect(uri, **CONNECTION_KWARGS) as conn,
        psycopg.connect(uri, **CONNECTION_KWARGS) as exact_conn,
    ):
        store = PostgresStore(conn, index=stock_index_config(corpus.dim, args.stock_index, embed))
        # the same store, kept off its ANN index so its filtered search returns k results
        exact_conn.execute("SET enable_indexscan = off")
        exact_store = PostgresStore(
            exact_conn, index=stock_index_config(corpus.dim, args.stock_index, embed)
        )
        for size, index in MEASURED:
            user = corpus.users[index]
            queries = corpus.queries(args.queries, seed=len(size))
            for text, vector in queries:
                embed.known[text] = vector
            scope = Scope.for_user(ORG, user)

            def ours(text: str, vector: list[float], scope: Scope = scope) -> int:
                got = memory.recall(scope, text, k=args.k, query_embedding=vector)
                return len(got.facts)

            def stock(text: str, _vector: list[float], user: str = user) -> int:
                return len(store.search(("facts", ORG, user), query=text, limit=args.k))

            def stock_exact(text: str, _vector: list[float], user: str = user) -> int:
                return len(exact_store.search(("facts", ORG, user), query=text, limit=args.k))

            calls: dict[str, Callable[[str, list[float]], int]] = {
                "recollect": ours,
                "stock": stock,
                "stock_exact": stock_exact,
            }
            if size == "huge":  # seconds a query: scanning every tenant's vectors
                del calls["stock_exact"]
            for key in ("p50_ms", "p95_ms", "mean_results"):
                results["stock_exact"][f"{key}_{size}"] = None
            for name, (ms, returned) in measure(calls, queries, warmup=20).items():
                results[name][f"p50_ms_{size}"] = round(statistics.median(ms), 3)
                results[name][f"p95_ms_{size}"] = round(percentile(ms, 0.95), 3)
                results[name][f"mean_results_{size}"] = round(statistics.mean(returned), 2)
    pool.close()
    overlap = dense_overlap(uri, corpus, min(args.queries, 100))
    ann = None if args.skip_ann else ann_versus_exact(uri, corpus, min(args.queries, 200))
    results["recollect"]["ingest_facts_per_s"] = round(ours_rate)
    for name in ("stock", "stock_exact"):
        results[name]["ingest_facts_per_s"] = round(stock_rate)
        results[name]["index"] = args.stock_index if name == "stock" else "none (exact scan)"
        results[name]["index_build_s"] = round(build_s, 1)
    for name in results:
        results[name]["embed_ms_p50"] = None  # vectors are precomputed: embedding excluded
    sizes = [size for size, _ in MEASURED]
    print(f"\n{'system':<12}" + "".join(f" {'p50 ' + s:>10} {'p95 ' + s:>10}" for s in sizes)
          + f" {'results':>8} {'ingest/s':>10}")  # fmt: skip
    for name, r in results.items():
        print(f"{name:<12}"
              + "".join(f" {_ms(r['p50_ms_' + s])} {_ms(r['p95_ms_' + s])}" for s in sizes)
              + f" {min(r['mean_results_' + s] or math.inf for s in sizes):>8.1f}"
              f" {r['ingest_facts_per_s']:>10,}")  # fmt: skip
    keys = [f"{q}_ms_{s}" for s in sizes for q in ("p50", "p95")]
    ratio = {
        peer: {
            key: round(results[peer][key] / results["recollect"][key], 2)
            for key in keys
            if results[peer][key] is not None
        }
        for peer in ("stock", "stock_exact")
    }
    print(f"peer / recollect latency: {ratio}")
    payload = {
        "facts": args.facts,
        "users": args.users,
        "dim": args.dim,
        "queries": args.queries,
        "k": args.k,
        "large_user_facts": corpus.large_n,
        "huge_user_facts": corpus.huge_n,
        "small_user_facts": corpus.small_n,
        "systems": results,
        "peer_over_recollect": ratio,
        "dense_overlap_with_exact": {"top": OVERLAP_TOP, **overlap},
        "dense_exact_vs_ann": ann,
    }
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(payload, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
