"""The async pool graph steps use on an event loop (the served API), beside `pool`'s sync one.

An async step that awaits its SQL holds no thread while Postgres answers, so a burst of runs
waits on sockets instead of queueing for the bounded executor. The pool follows the sync one:
1. a pool installed with `use_async_pool` for a block (tests, scripts that bring their own);
2. else one per event loop, on the same database as a given sync pool (the memory engine's)
   or `shared_pool()` (the installed pool, the process's, or the served API's own): the one
   the served API's checkpointer lent (`adopt_async_pool`), or one opened on first use with
   at most `RECOLLECT_ASYNC_POOL_SIZE` connections (default 8) and closed with its loop.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Any

from psycopg_pool import AsyncConnectionPool, ConnectionPool

from recollect.store.budget import (
    ASYNC_POOL_SIZE_ENV,
    POOL_MAX_IDLE_S,
    BudgetedAsyncPool,
    async_pool_size,
)
from recollect.store.liveness import acheck_connection
from recollect.store.pool import open_shared_pool, shared_pool
from recollect.store.server import CONNECT_TIMEOUT_S, CONNECTION_KWARGS, RECONNECT_TIMEOUT_S

_installed: ContextVar[AsyncConnectionPool[Any] | None] = ContextVar(
    "recollect_async_pool", default=None
)
_by_loop: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[str, AsyncConnectionPool[Any]]
] = weakref.WeakKeyDictionary()
_opening: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
    weakref.WeakKeyDictionary()
)


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
            pool = open_async_pool(conninfo)
            await pool.open(wait=True, timeout=CONNECT_TIMEOUT_S * 2)
            pools[conninfo] = pool
        return pool


def open_async_pool(conninfo: str, name: str = "recollect-async") -> AsyncConnectionPool[Any]:
    """An unopened async pool within the budget (`store.budget`), whose connections suit the
    checkpointer and our stores alike."""
    return BudgetedAsyncPool(
        conninfo,
        size_variable=ASYNC_POOL_SIZE_ENV,
        min_size=1,
        max_size=async_pool_size(),
        max_idle=POOL_MAX_IDLE_S,
        kwargs=dict(CONNECTION_KWARGS),
        name=name,
        open=False,
        check=acheck_connection,  # drop what a restart killed
        reconnect_timeout=RECONNECT_TIMEOUT_S,
    )


@asynccontextmanager
async def adopt_async_pool(pool: AsyncConnectionPool[Any]) -> AsyncIterator[None]:
    """Make an open `pool` this loop's async pool for its database until the block exits: the
    served API's checkpointer lends its pool to the async steps, so one process holds one
    async pool, not two."""
    conninfo = pool.conninfo
    if not isinstance(conninfo, str):
        raise TypeError("an adopted async pool needs a fixed conninfo, not a function")
    pools = _by_loop.setdefault(asyncio.get_running_loop(), {})
    pools[conninfo] = pool
    try:
        yield
    finally:
        if pools.get(conninfo) is pool:
            del pools[conninfo]


async def close_async_pools() -> None:
    """Close this loop's pools (a test or script that ends its loop; the server's live on)."""
    pools = _by_loop.pop(asyncio.get_running_loop(), {})
    for pool in pools.values():
        await pool.close()
