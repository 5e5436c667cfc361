"""Who holds the offline embedder next: a turn's query before a worker's passages.

One e5 engine serves a process, one call at a time. The served worker embeds a job's facts
as passages while the turns embed their queries; under a plain lock a turn's query waited
for a worker's whole batch. Passages are embedded a few at a time and yield the engine to any
query that is waiting, so a query waits for at most one small batch."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class QueriesFirst:
    """A lock with two kinds of holder: a waiting query goes before every waiting passage."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._busy = False
        self._queries_waiting = 0

    @contextmanager
    def query(self) -> Iterator[None]:
        with self._changed:
            self._queries_waiting += 1
            try:
                self._changed.wait_for(lambda: not self._busy)
            finally:
                self._queries_waiting -= 1
            self._busy = True
        try:
            yield
        finally:
            self._release()

    @contextmanager
    def passages(self) -> Iterator[None]:
        with self._changed:
            self._changed.wait_for(lambda: not self._busy and not self._queries_waiting)
            self._busy = True
        try:
            yield
        finally:
            self._release()

    def _release(self) -> None:
        with self._changed:
            self._busy = False
            self._changed.notify_all()
