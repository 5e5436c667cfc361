"""One connection pool per process, for code that runs where no pool is handed in.

Graph nodes cannot receive a pool through LangGraph's run-time context (it must stay
serialisable for the HTTP API), so they ask here. A process that already has a pool (the CLI,
a test) installs it with `use_pool`; otherwise — under `langgraph dev` or LangGraph Platform —
the first caller resolves the database the same way `platform_checkpointer` does, migrates it
and opens a pool that lives until the process exits.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from psycopg_pool import ConnectionPool

from recollect.memory.db import open_pool, resolve_uri

_lock = threading.Lock()
_installed: list[ConnectionPool[Any]] = []
_opened: dict[str, ConnectionPool[Any]] = {}


@contextmanager
def use_pool(pool: ConnectionPool[Any]) -> Iterator[ConnectionPool[Any]]:
    """Make `pool` this process's pool until the block exits (nests; innermost wins)."""
    with _lock:
        _installed.append(pool)
    try:
        yield pool
    finally:
        with _lock:
            _installed.remove(pool)


def shared_pool() -> ConnectionPool[Any]:
    """The installed pool, else one opened (and migrated) on first use."""
    with _lock:
        if _installed:
            return _installed[-1]
        if "default" not in _opened:
            from recollect.memory.persistence import migrate

            uri = resolve_uri(announce=False)
            migrate(uri)
            pool = open_pool(uri, name="recollect-shared")
            _opened["default"] = pool
            atexit.register(pool.close)
        return _opened["default"]
