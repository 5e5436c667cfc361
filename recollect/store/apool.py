"""The async pool graph steps use on an event loop (the served API), beside `pool`'s sync one.

An async step that awaits its SQL holds no thread while Postgres answers, so a burst of runs
waits on sockets instead of queueing for the bounded executor. The pool follows the sync one:
1. a pool installed with `use_async_pool` for a block (tests, scripts that bring their own);
2. else one per event loop, on the same database as a given sync pool (the memory engine's)
   or `shared_pool()` (the installed pool, the process's, or the served API's own), opened
   on first use with
   at most `RECOLLECT_ASYNC_POOL_SIZE` connections (default 8), and closed with its loop.
"""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Any

from psycopg_pool import AsyncConnectionPool, ConnectionPool

from recollect.store.liveness import acheck_connection
from recollect.store.pool import open_shared_pool, shared_pool
from recollect.store.server import CONNECT_TIMEOUT_S, CONNECTION_KWARGS, RECONNECT_TIMEOUT_S

ASYNC_POOL_SIZE_ENV = "RECOLLECT_ASYNC_POOL_SIZE"
DEFAULT_ASYNC_POOL_SIZE = 8

_installed: ContextVar[AsyncConnectionPool[Any] | None] = ContextVar(
    "recollect_async_pool", default=None
)
_by_loop: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[str, AsyncConnectionPool[Any]]
] = weakref.WeakKeyDictionary()
_opening: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
    weakref.WeakKeyDictionary()
)


def async_pool_size() -> int:
    """`RECOLLECT_ASYNC_POOL_SIZE`, a whole number ≥ 1; 8 when unset."""
    raw = os.environ.get(ASYNC_POOL_SIZE_ENV, "")
    try:
        value = int(raw) if raw else DEFAULT_ASYNC_POOL_SIZE
    except ValueError as exc:
        raise ValueError(f"{ASYNC_POOL_SIZE_ENV} must be a whole number, got {raw!r}") from exc
    if value < 1:
        raise ValueError(f"{ASYNC_POOL_SIZE_ENV} must be at least 1, got {value}")
    return value


@asynccontextmanager
async def use_async_pool(pool: AsyncConnectionPool[Any]) -> AsyncIterator[AsyncConnectionPool[Any]]:
    """Make `pool` the async pool for this context until the block exits (nests)."""
    token = _installed.set(pool)
    try:
        yield pool
    finally:
        _installed.reset(token)


async def shared_async_pool(like: ConnectionPool[Any] | None = None) -> AsyncConnectionPool[Any]:
    """The installed async pool, else this loop's pool on the database of `like` (a sync pool
    the caller's engine uses), or of `shared_pool()`."""
    installed = _installed.get()
    if installed is not None:
        return installed
    loop = asyncio.get_running_loop()
    sync = like or open_shared_pool()
    if sync is None:  # resolving, opening and migrating block: once, off the loop
        sync = await asyncio.to_thread(shared_pool)
    conninfo = sync.conninfo if isinstance(sync.conninfo, str) else sync.conninfo()
    pools = _by_loop.setdefault(loop, {})
    pool = pools.get(conninfo)
    if pool is not None:
        return pool
    async with _opening.setdefault(loop, asyncio.Lock()):
        pool = pools.get(conninfo)
        if pool is None:
            pool = AsyncConnectionPool(
                conninfo,
                min_size=1,
                max_size=async_pool_size(),
                kwargs=dict(CONNECTION_KWARGS),
                name="recollect-async",
                open=False,
                check=acheck_connection,  # drop what a restart killed
                reconnect_timeout=RECONNECT_TIMEOUT_S,
            )
            await pool.open(wait=True, timeout=CONNECT_TIMEOUT_S * 2)
            pools[conninfo] = pool
        return pool


async def close_async_pools() -> None:
    """Close this loop's pools (a test or script that ends its loop; the server's live on)."""
    pools = _by_loop.pop(asyncio.get_running_loop(), {})
    for pool in pools.values():
        await pool.close()
