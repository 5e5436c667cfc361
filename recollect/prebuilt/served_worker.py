"""The extraction worker inside the server: the served app's lifespan (`langgraph.json` →
`http.app`) runs it beside the API, so plain `langgraph dev` and LangGraph Platform extract
facts with no process started by hand.

Each server process starts one worker process of its own (`worker_process`) and stops it
with the server. A process, not a thread: extraction's Python work (screening, embedding
passages) never takes the server's interpreter lock, so it costs the turns what a
`recollect worker` beside the server costs them (`bench.load --worker`).
Jobs are claimed with `FOR UPDATE SKIP LOCKED` under a lease, so several server processes
(and any `recollect worker`) share one queue and never extract a turn twice. A worker that
exits on its own is started again; one cut short by the server's end leaves its job to its
lease. `RECOLLECT_SERVER_WORKER=off` leaves extraction to a `recollect worker` of its own.
"""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from recollect.history.persistence import open_worker_pool
from recollect.prebuilt import worker_process
from recollect.store.errors import ConfigurationError
from recollect.store.migrations import prepare
from recollect.store.server import resolve_uri

log = logging.getLogger(__name__)

SERVER_WORKER_ENV = "RECOLLECT_SERVER_WORKER"
STOP_WAIT_S = 10.0
"""How long shutdown waits for a job in flight before leaving it to its lease."""
RESTART_AFTER_S = 5.0
"""The pause before a worker that exited on its own is started again."""


def server_worker_enabled() -> bool:
    """`on` (default) or `off`; anything else is refused with one line."""
    raw = (os.environ.get(SERVER_WORKER_ENV) or "on").strip().lower()
    if raw in ("on", "1", "true", "yes"):
        return True
    if raw in ("off", "0", "false", "no"):
        return False
    raise ConfigurationError(f"{SERVER_WORKER_ENV} must be on or off, got {raw[:40]!r}")


class RunningWorker:
    """The worker process of one server process, started again should it exit on its own."""

    def __init__(self, target: str) -> None:
        self._target = target
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self.process = self._spawn()
        self._watcher = threading.Thread(target=self._watch, name="memory-worker", daemon=True)
        self._watcher.start()

    def _spawn(self) -> subprocess.Popen[bytes]:
        """The server's process id and the database URI go through a pipe: the URI never on
        a command line others can read."""
        process = subprocess.Popen(
            [sys.executable, "-m", worker_process.__name__], stdin=subprocess.PIPE
        )
        assert process.stdin is not None
        process.stdin.write(f"{os.getpid()}\n{self._target}\n".encode())
        process.stdin.close()
        return process

    def _watch(self) -> None:
        while True:
            code = self.process.wait()
            if self._stopping.wait(RESTART_AFTER_S):
                return
            log.warning("memory worker exited (%s); starting it again", code)
            with self._lock:
                if self._stopping.is_set():
                    return
                self.process = self._spawn()

    def close(self) -> None:
        """Ask the worker to stop between jobs; one still running after `STOP_WAIT_S` is
        killed, and its job is taken up again when the lease runs out."""
        with self._lock:
            self._stopping.set()
        self.process.terminate()
        try:
            self.process.wait(STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            log.warning("memory worker: a job still running at shutdown is left to its lease")
            self.process.kill()
            self.process.wait()


def start_server_worker() -> RunningWorker:
    """Check the served database and the worker role's login (a bad setting stops the server
    at start, with one line), then start the worker process."""
    target = resolve_uri(announce=False)
    prepare(target)
    open_worker_pool(target).close()
    log.info("memory worker: extracting queued turns beside this server process")
    return RunningWorker(target)


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
