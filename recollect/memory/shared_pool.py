"""The pool graph steps use when no pool can be handed to them.

Graph nodes cannot receive a pool through LangGraph's run-time context (it must stay
serialisable for the HTTP API), so they ask here. Whoever runs a graph with a pool of its own
(the CLI, `Approvals`, a test) installs it with `use_pool` for the duration — a context
variable, so concurrent runs in other threads or tasks keep theirs. Where nobody installed one
— under `langgraph dev` or LangGraph Platform — the first caller resolves the database the
same way `platform_checkpointer` does, migrates it and opens a pool that lives until the
process exits.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from psycopg_pool import ConnectionPool

from recollect.memory.db import open_pool, resolve_uri
from recollect.memory.persistence import migrate

_installed: ContextVar[ConnectionPool[Any] | None] = ContextVar("recollect_pool", default=None)
_lock = threading.Lock()
_opened: dict[str, ConnectionPool[Any]] = {}


@contextmanager
def use_pool(pool: ConnectionPool[Any]) -> Iterator[ConnectionPool[Any]]:
    """Make `pool` the pool for this context until the block exits (nests)."""
    token = _installed.set(pool)
    try:
        yield pool
    finally:
        _installed.reset(token)


def shared_pool() -> ConnectionPool[Any]:
    """The installed pool, else the process's own, opened (and migrated) on first use."""
    installed = _installed.get()
    if installed is not None:
        return installed
    with _lock:
        if "default" not in _opened:
            uri = resolve_uri(announce=False)
            migrate(uri)
            pool = open_pool(uri, name="recollect-shared")
            _opened["default"] = pool
            atexit.register(pool.close)
        return _opened["default"]
