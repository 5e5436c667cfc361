"""Turn traces are written off the reply path: a node hands its trace to a daemon thread, which
writes whatever has queued up in one transaction per owner. A trace is an explanation, not
data the conversation depends on: if the database is away it is logged and dropped, and the
queue is bounded so a stalled database cannot grow memory. Before a process closes its pool
the writer is flushed (`store.pool.before_closing`): exit waits for the queue no longer than
`RECOLLECT_TRACE_EXIT_TIMEOUT_S` (a batch started meanwhile waits for a connection no longer
than what is left of it), drops what is still queued, and says in one line how many traces
were lost."""

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
from recollect.trace.settings import exit_timeout_s
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
        self._closing_by: float | None = None
        """While a closing process waits: the monotonic deadline its batches must keep to."""
        self._in_flight = 0
        """Traces of the batch being written that are neither written nor failed yet."""
        self._batch_reported = False
        """A closing line counted the batch's unfinished traces: their failure says nothing."""
        self._lost_closing = 0
        """Traces whose write failed while a closing process waited."""

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

    def flush_before_closing(self, timeout_s: float | None = None) -> bool:
        """`flush` for at most `timeout_s` (`RECOLLECT_TRACE_EXIT_TIMEOUT_S` when None); then
        the queue is dropped and one line on stderr says how many traces were lost: those
        dropped, those whose write is still waiting, and those that failed meanwhile (the pool
        is about to close; the conversation itself is saved). Each is counted once."""
        limit = exit_timeout_s() if timeout_s is None else timeout_s
        with self._lock:
            self._lost_closing = 0
            self._closing_by = time.monotonic() + limit
        try:
            self.flush(limit)
        finally:
            with self._lock:
                self._closing_by = None
                lost = self._drop_queued() + self._lost_closing
                if not self._batch_reported:
                    lost += self._in_flight
                    self._batch_reported = True
        if not lost:
            return True
        print(
            f"recollect: {lost} turn trace(s) not written within {limit:g}s of exit and "
            "dropped (the conversation itself is saved)",
            file=sys.stderr,
            flush=True,
        )
        return False

    def _drop_queued(self) -> int:
        """Empty the queue without writing it (a batch already begun carries on); how many."""
        dropped = 0
        while True:
            try:
                self._queue.get_nowait()
            except queue.Empty:
                return dropped
            self._queue.task_done()
            dropped += 1

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
            with self._lock:
                self._in_flight = len(batch)
                self._batch_reported = False
            try:
                self._write(batch)
            finally:
                with self._lock:
                    self._in_flight = 0
                for _ in batch:
                    self._queue.task_done()

    def _write(self, batch: list[tuple[ConnectionPool[Any], PendingTrace]]) -> None:
        by_pool: dict[int, tuple[ConnectionPool[Any], list[PendingTrace]]] = {}
        for pool, item in batch:
            by_pool.setdefault(id(pool), (pool, []))[1].append(item)
        for pool, items in by_pool.values():
            failure: Exception | None = None
            try:
                write_turns(pool, items, timeout=self._connection_timeout())
            except Exception as exc:  # a trace must never take a conversation down
                failure = exc
            with self._lock:
                self._in_flight -= len(items)
                if failure is None or self._batch_reported:
                    continue  # written, or already counted by a closing line
                if self._closing_by is not None:
                    self._lost_closing += len(items)  # the closing line will count them
                    continue
            log.warning("%d turn traces not written: %s", len(items), failure)

    def _connection_timeout(self) -> float | None:
        """The pool's own timeout, or what is left of a closing process's deadline."""
        closing_by = self._closing_by
        return None if closing_by is None else max(0.0, closing_by - time.monotonic())


WRITER = TraceWriter()
"""The process's writer; `flush()` it before reading traces this process wrote."""

before_closing(WRITER.flush_before_closing)
atexit.register(WRITER.flush_before_closing)  # a script that closes no pool of ours
