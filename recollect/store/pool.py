"""The pool graph steps use when no pool can be handed to them.

Graph nodes cannot receive a pool through LangGraph's run-time context (it must stay
serialisable for the HTTP API), so they ask here, in this order:
1. a pool installed with `use_pool` for the duration of a block — a context variable, so
   concurrent runs in other threads or tasks keep theirs (`Approvals`, tests);
2. the process's pool, installed by `open_persistence` while it is open (the CLI);
3. under `langgraph dev` or LangGraph Platform, where nobody installed one, a pool the first
   caller opens (as the app role, after migrating) that lives until the process exits
   (`lifetime_pool`, which the served memory engine uses too: one sync pool a process).
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from psycopg_pool import ConnectionPool

from recollect.store.migrations import prepare
from recollect.store.roles import app_uri
from recollect.store.server import open_pool, resolve_uri

_installed: ContextVar[ConnectionPool[Any] | None] = ContextVar("recollect_pool", default=None)
_lock = threading.Lock()
_process: list[ConnectionPool[Any]] = []
_opened: dict[str, ConnectionPool[Any]] = {}


@contextmanager
def use_pool(pool: ConnectionPool[Any]) -> Iterator[ConnectionPool[Any]]:
    """Make `pool` the pool for this context until the block exits (nests)."""
    token = _installed.set(pool)
    try:
        yield pool
    finally:
        _installed.reset(token)


@contextmanager
def install_process_pool(pool: ConnectionPool[Any]) -> Iterator[ConnectionPool[Any]]:
    """Make `pool` every thread's fallback until the block exits (background threads and
    LangGraph's executor threads do not inherit context variables)."""
    with _lock:
        _process.append(pool)
    try:
        yield pool
    finally:
        with _lock:
            _process.remove(pool)


def open_shared_pool() -> ConnectionPool[Any] | None:
    """What `shared_pool()` would return, without opening one (so without blocking)."""
    installed = _installed.get()
    if installed is not None:
        return installed
    with _lock:
        return _process[-1] if _process else _opened.get("default")


def shared_pool() -> ConnectionPool[Any]:
    """The installed pool, else the process's, else one opened (and migrated) on first use."""
    installed = _installed.get()
    if installed is not None:
        return installed
    with _lock:
        if _process:
            return _process[-1]
    return lifetime_pool()


def lifetime_pool() -> ConnectionPool[Any]:
    """The pool this process opens on first use (as the app role, after migrating) and keeps
    until it exits: the served API's store, memory engine and sync steps share it, whatever
    a block installed meanwhile."""
    with _lock:
        if "default" not in _opened:
            uri = resolve_uri(announce=False)
            prepare(uri)
            pool = open_pool(app_uri(uri), name="recollect-shared")
            _opened["default"] = pool
            atexit.register(pool.close)
        return _opened["default"]
