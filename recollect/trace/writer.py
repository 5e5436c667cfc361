"""Turn traces are written off the reply path: a node hands its trace to a daemon thread, which
writes whatever has queued up in one transaction per owner. A trace is an explanation, not
data the conversation depends on: if the database is away it is logged and dropped, and the
queue is bounded so a stalled database cannot grow memory."""

from __future__ import annotations

import atexit
import logging
import queue
import threading
import time
from typing import Any

from psycopg_pool import ConnectionPool

from recollect.trace.store import PendingTrace, write_turns

log = logging.getLogger(__name__)

MAX_PENDING = 1000
MAX_BATCH = 200
FLUSH_TIMEOUT_S = 10.0


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

atexit.register(WRITER.flush, 2.0)
