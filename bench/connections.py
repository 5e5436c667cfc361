"""Postgres connections the command-line processes hold: a chat (with its background worker)
and a `recollect worker`, side by side on one throwaway embedded Postgres.

Each process is told apart by its `application_name` (libpq reads `PGAPPNAME`); the peak is
polled from `pg_stat_activity` while the chat sends `--turns` messages (offline model) and the
worker drains what they queue, then the count is followed while both sit idle (`--settle`).
The served API's figures come from `bench.load`.

    python -m bench.connections --json bench/out/connections.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import psycopg

from bench.load import temporary_postgres

PROCESSES = {"chat": ("chat", "--user", "bench-user"), "worker": ("worker",)}
TURNS = 20
SETTLE_S = 40.0
COUNT_BY_PROCESS = """
SELECT application_name AS name, count(*) AS n FROM pg_stat_activity
WHERE datname = current_database() AND pid <> pg_backend_pid() GROUP BY 1
"""


class Watch:
    """Peak connections per application name, polled every `every_s`."""

    def __init__(self, uri: str, every_s: float = 0.05) -> None:
        self.uri, self.every = uri, every_s
        self.peaks: dict[str, int] = {}
        self.stop = threading.Event()

    def now(self) -> dict[str, int]:
        with psycopg.connect(self.uri, autocommit=True) as conn:
            return {str(r[0]): int(r[1]) for r in conn.execute(COUNT_BY_PROCESS).fetchall()}

    def poll(self) -> None:
        with psycopg.connect(self.uri, autocommit=True) as conn:
            while not self.stop.is_set():
                for name, n in conn.execute(COUNT_BY_PROCESS).fetchall():
                    self.peaks[str(name)] = max(self.peaks.get(str(name), 0), int(n))
                self.stop.wait(self.every)


def run(uri: str, turns: int, settle_s: float, data: Path) -> dict[str, Any]:
    """Start the worker and the chat, send the turns, then watch both idle."""
    env = {**os.environ, "RECOLLECT_DATABASE_URI": uri, "RECOLLECT_DATA_DIR": str(data)}
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "RECOLLECT_MODEL", "DATABASE_URI"):
        env.pop(name, None)
    watch = Watch(uri)
    poller = threading.Thread(target=watch.poll, daemon=True)
    poller.start()
    started: dict[str, subprocess.Popen[str]] = {}
    for name, args in PROCESSES.items():
        started[name] = subprocess.Popen(
            [sys.executable, "-m", "recollect.cli.main", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**env, "PGAPPNAME": f"bench-{name}", "RECOLLECT_EXTRACT_EVERY_TURNS": "2"},
        )
    chat = started["chat"]
    assert chat.stdin is not None
    for turn in range(turns):
        chat.stdin.write(f"I moved to Lisbon and cycle to work, turn {turn}\n")
        chat.stdin.flush()
        time.sleep(0.5)
    samples: list[dict[str, Any]] = []
    began = time.monotonic()
    while (elapsed := time.monotonic() - began) < settle_s:
        samples.append({"s": round(elapsed, 1), **watch.now()})
        time.sleep(5)
    watch.stop.set()
    poller.join()
    chat.stdin.write("/exit\n")
    chat.stdin.flush()
    for process in started.values():
        process.terminate()
        process.wait(timeout=30)
    peaks = {name: watch.peaks.get(f"bench-{name}", 0) for name in PROCESSES}
    for name, peak in peaks.items():
        idle = samples[-1].get(f"bench-{name}", 0) if samples else 0
        print(f"{name:7} peak={peak} idle after {settle_s:.0f}s={idle}", flush=True)
    return {
        "benchmark": "connections",
        "turns": turns,
        "peaks": peaks,
        "settle_s": settle_s,
        "idle": samples,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=TURNS, help="messages the chat sends")
    parser.add_argument("--settle", type=float, default=SETTLE_S, help="idle seconds watched")
    parser.add_argument("--json", type=Path, default=None, help="write the result here")
    args = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="recollect-connections-"))
    with temporary_postgres(root) as uri:
        result = run(uri, args.turns, args.settle, root / "data")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
