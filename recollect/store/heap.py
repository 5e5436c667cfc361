"""The served process's garbage collector, settled once its code is loaded.

A served process imports LangGraph, LangChain, the graphs and the engine: some 190,000 objects
that live as long as it does. CPython's cyclic collector walks all of them in every full
collection (130 to 250 ms each on a 2-core machine, several a minute under load, each one
stopping every run in flight), and collects its youngest generation every 700 allocations.
`settle_heap` runs a last full collection, moves what survives out of the collector's sight
(`gc.freeze`), and collects the young generation every `YOUNG_THRESHOLD` allocations. Garbage
is still freed: reference counting frees most of it at once, and cycles made after settling
are still found.

`RECOLLECT_GC_SETTLE=off` leaves the interpreter's defaults.
"""

from __future__ import annotations

import gc
import os
import threading

from recollect.store.errors import ConfigurationError

SETTLE_ENV = "RECOLLECT_GC_SETTLE"
YOUNG_THRESHOLD = 20_000
"""Allocations between young collections (CPython's default: 700)."""
OLDER_THRESHOLDS = (20, 20)
"""Young collections per middle one, middle ones per full one (defaults: 10 and 10)."""

_ON = frozenset({"on", "1", "true", "yes"})
_OFF = frozenset({"off", "0", "false", "no"})
_lock = threading.Lock()
_settled = False


def settle_enabled() -> bool:
    """`RECOLLECT_GC_SETTLE`: `on` (default) or `off`; anything else is refused with one line."""
    raw = (os.environ.get(SETTLE_ENV) or "on").strip().lower()
    if raw not in _ON | _OFF:
        raise ConfigurationError(f"{SETTLE_ENV} must be on or off, got {raw[:40]!r}")
    return raw in _ON


def settle_heap() -> bool:
    """Collect once, freeze the survivors and space out young collections, once per process;
    True when this call did it."""
    global _settled
    if _settled or not settle_enabled():
        return False
    with _lock:
        if _settled:
            return False
        _settled = True
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, *OLDER_THRESHOLDS)
    return True
