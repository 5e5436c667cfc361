"""What one served turn costs: steps, checkpoints, transactions, round trips and CPU, recollect's
agent beside the stock one-node graph, in one process.

The served path's pieces without the HTTP server: the platform checkpointer over an async pool,
the async steps, the default memory engine and the offline model, on a throwaway embedded
Postgres; a user with no memory. Counts are per turn of one thread, turns 2 and 3 (after the
thread's first, before retention starts deleting), plus the round trips of the first turn that
deletes one: transactions are pool checkouts, round trips the times a pipelined connection
waited for the server (`tests/support/round_trips.py`).
CPU is `time.process_time()` over `--users` users of `--turns` turns each, all at once, per turn.
With `--server-worker` the served app's extraction worker runs in the same process, as it does
in a server, and its CPU counts in the turns' (each thread's fifth turn makes its job due).

    python -m bench.turn_cost --json bench/out/turn_cost.json
    python -m bench.turn_cost --server-worker --json bench/out/turn_cost_worker.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from langgraph.graph.state import CompiledStateGraph
from psycopg_pool import AsyncConnectionPool

from bench.load import _UNSET, temporary_postgres
from bench.stock_graph import builder as stock_builder
from graphs.agent import make_graph
from recollect import thread_config, user_turn
from recollect.history.persistence import PlatformPostgresSaver
from recollect.longterm.configured import configured_memory
from recollect.prebuilt.served_worker import start_server_worker
from recollect.state.context import Context
from recollect.store.apool import close_async_pools
from recollect.store.pool import install_process_pool
from recollect.store.roles import app_uri
from recollect.store.scope import Scope
from recollect.store.server import CONNECTION_KWARGS, open_pool
from tests.support.round_trips import round_trips

SCOPE = Scope.for_user("bench", "turn-cost")
CONTEXT = Context(org_id=SCOPE.org_id, user_id=SCOPE.user_id, model="offline")
USERS = 16
TURNS = 5
COUNTED_TURNS = (1, 2)
"""Turns 2 and 3 of a thread: claimed already, nothing for retention to delete yet."""
PRUNING = "round trips, pruning turn"
"""The first turn past retention's window, which deletes the oldest turn as every later one
does: the steady state of a long thread."""


class CountingSaver(PlatformPostgresSaver):
    """The platform saver, counting the checkpoints and write batches it is asked to store."""

    counts: Counter[str]

    async def aput(self, *args: Any, **kwargs: Any) -> Any:
        self.counts["checkpoints"] += 1
        return await super().aput(*args, **kwargs)

    async def aput_writes(self, *args: Any, **kwargs: Any) -> None:
        self.counts["write batches"] += 1
        await super().aput_writes(*args, **kwargs)


@contextmanager
def counted_checkouts(counts: Counter[str]) -> Iterator[None]:
    """Every connection any async pool hands out: one per transaction on the served path."""
    checkout = AsyncConnectionPool.connection

    def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        counts["transactions"] += 1
        return checkout(self, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(AsyncConnectionPool, "connection", counted)
        yield


async def one_thread(graph: Any, saver: CountingSaver, thread: str) -> dict[str, float]:
    """Per-turn counts over `COUNTED_TURNS` of one thread."""
    totals: Counter[str] = Counter()
    pruning_turn = max(saver.retain, max(COUNTED_TURNS) + 1)
    pruned = 0
    for turn in range(pruning_turn + 1):
        saver.counts = Counter()
        counts: Counter[str] = Counter()
        with counted_checkouts(counts), round_trips() as trips:
            chunks = [
                chunk
                async for chunk in graph.astream(
                    user_turn(f"turn {turn}: hello"), thread_config(thread), context=CONTEXT
                )
            ]
        if turn in COUNTED_TURNS:
            totals.update(saver.counts)
            totals.update(counts)
            totals["round trips"] += trips[0]
            totals["node runs"] += sum(len(chunk) for chunk in chunks)
        if turn == pruning_turn:
            pruned = trips[0]
    return {name: value / len(COUNTED_TURNS) for name, value in totals.items()} | {PRUNING: pruned}


async def cpu_per_turn(graph: Any, name: str, users: int, turns: int) -> dict[str, float]:
    """CPU and wall milliseconds per turn, `users` users at once, after one warm-up turn each."""

    async def user(index: int, count: int) -> None:
        for turn in range(count):
            config = thread_config(f"{name}-cpu-{index}")
            await graph.ainvoke(user_turn(f"turn {turn} from {index}"), config, context=CONTEXT)

    await asyncio.gather(*(user(i, 1) for i in range(users)))
    cpu, wall = time.process_time(), time.perf_counter()
    await asyncio.gather(*(user(i, turns) for i in range(users)))
    done = users * turns
    return {
        "cpu_ms_per_turn": round((time.process_time() - cpu) * 1000 / done, 1),
        "wall_ms_per_turn": round((time.perf_counter() - wall) * 1000 / done, 1),
    }


async def measure(uri: str, users: int, turns: int, worker: bool = False) -> dict[str, Any]:
    """Both systems on one database, one after the other (with the served worker beside them
    when `worker`)."""
    apool: AsyncConnectionPool[Any] = AsyncConnectionPool(
        app_uri(uri), max_size=8, kwargs=dict(CONNECTION_KWARGS), open=False
    )
    await apool.open(wait=True)
    pool = open_pool(app_uri(uri))
    try:
        with install_process_pool(pool):
            saver = CountingSaver(apool)
            saver.scope = SCOPE
            saver.counts = Counter()
            graphs: dict[str, CompiledStateGraph[Any, Any, Any, Any]] = {
                "stock": stock_builder.compile(checkpointer=saver),
                "recollect": make_graph(checkpointer=saver, memory=configured_memory(pool)),
            }
            running = await asyncio.to_thread(start_server_worker) if worker else None
            out: dict[str, Any] = {}
            try:
                for name, graph in graphs.items():
                    out[name] = await one_thread(graph, saver, f"{name}-counted")
                    out[name] |= await cpu_per_turn(graph, name, users, turns)
            finally:
                if running is not None:
                    await asyncio.to_thread(running.close)
            return out
    finally:
        await close_async_pools()
        await apool.close()
        pool.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=USERS, help="users at once for the CPU")
    parser.add_argument("--turns", type=int, default=TURNS, help="turns per user for the CPU")
    parser.add_argument("--json", type=Path, default=None, help="write the result here")
    parser.add_argument(
        "--server-worker", action="store_true", help="the served extraction worker beside"
    )
    args = parser.parse_args(argv)
    if min(args.users, args.turns) < 1:
        parser.error("--users and --turns must be at least 1")
    for name in _UNSET:
        os.environ.pop(name, None)
    root = Path(tempfile.mkdtemp(prefix="recollect-turn-cost-"))
    with temporary_postgres(root) as uri:
        os.environ["RECOLLECT_DATABASE_URI"] = uri  # where the served worker looks
        systems = asyncio.run(measure(uri, args.users, args.turns, args.server_worker))
    columns = [
        "node runs",
        "checkpoints",
        "write batches",
        "transactions",
        "round trips",
        PRUNING,
        "cpu_ms_per_turn",
        "wall_ms_per_turn",
    ]
    print(f"{'per turn':12}" + "".join(f"{c:>{max(18, len(c) + 2)}}" for c in columns))
    for name, row in systems.items():
        print(f"{name:12}" + "".join(f"{row.get(c, 0):>{max(18, len(c) + 2)}}" for c in columns))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        result = {"benchmark": "turn_cost", "users": args.users, "turns": args.turns}
        result |= {"server_worker": args.server_worker}
        args.json.write_text(json.dumps(result | {"systems": systems}, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
