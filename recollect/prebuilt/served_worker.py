"""The extraction worker inside the server: the served app's lifespan (`langgraph.json` →
`http.app`) runs it beside the API, so plain `langgraph dev` and LangGraph Platform extract
facts with no process of their own.

One thread per server process drains the queue a job at a time on the worker role's pool of
two connections, resting after each job so that it spends at most a share of its time on them
(`RECOLLECT_SERVER_WORKER_SHARE`). Jobs are claimed with `FOR UPDATE SKIP LOCKED` under a
lease, so several server processes (and any `recollect worker`) share one queue and never
extract a turn twice.
On shutdown the thread stops between jobs; a job cut short by the process's end is taken up
again when its lease runs out. `RECOLLECT_SERVER_WORKER=off` leaves extraction to a
`recollect worker` of its own.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from psycopg_pool import ConnectionPool

from recollect.extraction.episodes import checkpoint_reader
from recollect.extraction.worker import Outcome, Worker, start_background
from recollect.history.owned_checkpoints import ScopedPostgresSaver
from recollect.history.persistence import open_worker_pool
from recollect.store.errors import ConfigurationError
from recollect.store.migrations import prepare
from recollect.store.server import resolve_uri

log = logging.getLogger(__name__)

SERVER_WORKER_ENV = "RECOLLECT_SERVER_WORKER"
SHARE_ENV = "RECOLLECT_SERVER_WORKER_SHARE"
DEFAULT_SHARE = 0.2
"""The most of its time the worker spends on jobs: after a job it rests four times as long, so
under a burst of turns extraction waits rather than slowing them (`bench.load`)."""
STOP_WAIT_S = 10.0
"""How long shutdown waits for a job in flight before leaving it to its lease."""


def server_worker_enabled() -> bool:
    """`on` (default) or `off`; anything else is refused with one line."""
    raw = (os.environ.get(SERVER_WORKER_ENV) or "on").strip().lower()
    if raw in ("on", "1", "true", "yes"):
        return True
    if raw in ("off", "0", "false", "no"):
        return False
    raise ConfigurationError(f"{SERVER_WORKER_ENV} must be on or off, got {raw[:40]!r}")


def worker_share() -> float:
    """`RECOLLECT_SERVER_WORKER_SHARE`, above 0 and at most 1 (default 0.2)."""
    raw = (os.environ.get(SHARE_ENV) or "").strip()
    try:
        value = float(raw) if raw else DEFAULT_SHARE
    except ValueError:
        raise ConfigurationError(f"{SHARE_ENV} must be a number, got {raw[:40]!r}") from None
    if not 0 < value <= 1:
        raise ConfigurationError(f"{SHARE_ENV} must be above 0 and at most 1, got {raw[:40]!r}")
    return value


@dataclass
class RunningWorker:
    """The worker's thread, its stop signal and its pool."""

    thread: threading.Thread
    stop: threading.Event
    pool: ConnectionPool[Any]

    def close(self) -> None:
        """Stop between jobs, then close the pool (a job still running keeps its lease)."""
        self.stop.set()
        self.thread.join(STOP_WAIT_S)
        if self.thread.is_alive():
            log.warning("memory worker: a job still running at shutdown is left to its lease")
            return
        self.pool.close()


def start_server_worker() -> RunningWorker:
    """Open the worker role's pool on the served database and start draining the queue."""
    share = worker_share()  # a bad setting stops the server at start, with one line
    target = resolve_uri(announce=False)
    prepare(target)
    pool = open_worker_pool(target)
    worker = Worker(pool, read_session=checkpoint_reader(ScopedPostgresSaver(pool)))
    thread, stop = start_background(worker, _log_outcome, share)
    log.info("memory worker: extracting queued turns in this server process")
    return RunningWorker(thread, stop, pool)


@asynccontextmanager
async def server_worker(app: Any) -> AsyncIterator[None]:
    """The served app's lifespan: the worker runs while the server does."""
    if not server_worker_enabled():
        yield
        return
    running = await asyncio.to_thread(start_server_worker)  # blocking work off the loop
    try:
        yield
    finally:
        await asyncio.to_thread(running.close)


def _log_outcome(outcome: Outcome) -> None:
    if outcome.parked or outcome.error:
        log.warning("memory job %s: %s: %s", outcome.job_id, outcome.status, outcome.error)
    else:
        log.info(
            "memory job %s: %d stored, %d for review, %d rejected",
            outcome.job_id,
            outcome.stored,
            outcome.review,
            outcome.rejected,
        )
