"""Turn traces are written off the reply path: a node hands its trace to a daemon thread, which
writes whatever has queued up in one transaction per owner. A trace is an explanation, not
data the conversation depends on: if the database is away it is logged and dropped, and the
queue is bounded so a stalled database cannot grow memory. Before a process closes its pool
the writer is flushed (`store.pool.before_closing`): exit waits, bounded, for the queue, and
says in one line what it could not write."""

from __future__ import annotations

import atexit
import logging
import queue
import sys
import threading
import time
from typing import Any

from psycopg_pool import ConnectionPool

from recollect.store.pool import before_closing
from recollect.trace.store import PendingTrace, write_turns

log = logging.getLogger(__name__)

MAX_PENDING = 1000
MAX_BATCH = 200
FLUSH_TIMEOUT_S = 10.0
CLOSING_TIMEOUT_S = 60.0
"""How long a closing process waits for its queued traces: long enough for a loaded machine,
short enough that a database that stopped answering cannot hold the exit."""


class TraceWriter:
    """A bounded queue and the one thread that drains it."""

    def __init__(self, max_pending: int = MAX_PENDING) -> None:
        self._queue: queue.Queue[tuple[ConnectionPool[Any], PendingTrace]] = queue.Queue(
            max_pending
        )
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.dropped = 0

    def submit(self, pool: ConnectionPool[Any], item: PendingTrace) -> None:
        """Queue one trace; never blocks the caller (a full queue drops and counts it)."""
        self._start()
        try:
            self._queue.put_nowait((pool, item))
        except queue.Full:
            self.dropped += 1
            log.warning("trace queue full; a turn's trace was dropped")

    def flush(self, timeout_s: float = FLUSH_TIMEOUT_S) -> bool:
        """Wait until every queued trace is written (or dropped); False on timeout."""
        deadline = time.monotonic() + timeout_s
        while self._queue.unfinished_tasks:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.005)
        return True

    @property
    def pending(self) -> int:
        """Traces queued or being written."""
        return self._queue.unfinished_tasks

    def flush_before_closing(self, timeout_s: float = CLOSING_TIMEOUT_S) -> bool:
        """`flush`, and one line on stderr when traces are still unwritten at the deadline
        (the pool is about to close, so they are lost; the conversation is not)."""
        if self.flush(timeout_s):
            return True
        print(
            f"recollect: {self.pending} turn trace(s) not written within {timeout_s:g}s of "
            "exit and dropped (the conversation itself is saved)",
            file=sys.stderr,
            flush=True,
        )
        return False

    def _start(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._drain, name="recollect-trace", daemon=True
                )
                self._thread.start()

    def _drain(self) -> None:
        while True:
            batch = [self._queue.get()]
            while len(batch) < MAX_BATCH:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            try:
                self._write(batch)
            finally:
                for _ in batch:
                    self._queue.task_done()

    @staticmethod
    def _write(batch: list[tuple[ConnectionPool[Any], PendingTrace]]) -> None:
        by_pool: dict[int, tuple[ConnectionPool[Any], list[PendingTrace]]] = {}
        for pool, item in batch:
            by_pool.setdefault(id(pool), (pool, []))[1].append(item)
        for pool, items in by_pool.values():
            try:
                write_turns(pool, items)
            except Exception as exc:  # a trace must never take a conversation down
                log.warning("%d turn traces not written: %s", len(items), exc)


WRITER = TraceWriter()
"""The process's writer; `flush()` it before reading traces this process wrote."""

before_closing(WRITER.flush_before_closing)
atexit.register(WRITER.flush_before_closing)  # a script that closes no pool of ours
