"""A turn's trace while it is gathered: held in the process, keyed by thread and the turn's
user message, never in the checkpoint (a trace in state would be written at every step and
multiply the thread's checkpoint bytes). All steps of one run execute in one process; the map
is bounded, so turns that never finish (a crash, an interrupt) cannot grow it."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

MAX_OPEN_TURNS = 1000

TurnKey = tuple[str, str]
"""(thread id, id of the turn's user message)."""


class TurnCollector:
    """Parts of open turns' traces, oldest evicted first beyond `max_open`."""

    def __init__(self, max_open: int = MAX_OPEN_TURNS) -> None:
        self._open: OrderedDict[TurnKey, dict[str, Any]] = OrderedDict()
        self._lock = threading.Lock()
        self._max_open = max_open

    def start(self, key: TurnKey, part: dict[str, Any]) -> None:
        """Begin a turn's trace afresh (a retried turn starts over)."""
        with self._lock:
            self._open[key] = dict(part)
            self._open.move_to_end(key)
            while len(self._open) > self._max_open:
                self._open.popitem(last=False)

    def add(self, key: TurnKey, part: dict[str, Any]) -> dict[str, Any]:
        """Merge `part` into the turn's trace (starting one if recall did not); returns it."""
        with self._lock:
            trace = self._open.setdefault(key, {})
            trace.update(part)
            return dict(trace)

    def take(self, key: TurnKey) -> dict[str, Any] | None:
        """The finished trace, removed; None if nothing was gathered."""
        with self._lock:
            return self._open.pop(key, None)

    def __len__(self) -> int:
        return len(self._open)


COLLECTOR = TurnCollector()
