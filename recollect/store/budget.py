"""How many Postgres connections a process may hold, and what it says when that is not enough.

A served process keeps two pools on the app role's database: the sync one that the store, the
memory engine and sync steps share (`RECOLLECT_POOL_SIZE`, default 4) and the async one that
the checkpointer and async steps share (`RECOLLECT_ASYNC_POOL_SIZE`, default 8): at most 12.
A burst grows them; once it is over they give back one idle connection every
`POOL_MAX_IDLE_S` seconds down to one each, so a quiet server holds two, not twelve. A pool
that gets no connection for its whole timeout asks Postgres why (`refusal`): a pool that stayed
full raises `PoolExhaustedError`, one line naming the setting; a server that refused or did
not answer raises `DatabaseRefusedError`, naming that cause and its fix.
"""

from __future__ import annotations

import os
from typing import Any

from psycopg import AsyncConnection, Connection
from psycopg_pool import AsyncConnectionPool, ConnectionPool, PoolTimeout

from recollect.store.errors import (
    ConfigurationError,
    DatabaseRefusedError,
    NoConnectionError,
    PoolExhaustedError,
)
from recollect.store.refusal import aprobe, probe, refused_line

POOL_SIZE_ENV = "RECOLLECT_POOL_SIZE"
DEFAULT_POOL_SIZE = 4
ASYNC_POOL_SIZE_ENV = "RECOLLECT_ASYNC_POOL_SIZE"
DEFAULT_ASYNC_POOL_SIZE = 8
POOL_MAX_IDLE_S = 10.0
"""A connection unused this long is closed (one per period per pool; psycopg_pool's default
of 10 minutes kept a burst's connections for over an hour)."""


def pool_size() -> int:
    """`RECOLLECT_POOL_SIZE`: most connections of a process's sync pool (default 4)."""
    return _size(POOL_SIZE_ENV, DEFAULT_POOL_SIZE)


def async_pool_size() -> int:
    """`RECOLLECT_ASYNC_POOL_SIZE`: most connections of the served API's async pool (default 8)."""
    return _size(ASYNC_POOL_SIZE_ENV, DEFAULT_ASYNC_POOL_SIZE)


def _size(variable: str, default: int) -> int:
    raw = os.environ.get(variable, "").strip()
    try:
        value = int(raw) if raw else default
    except ValueError:
        raise ConfigurationError(f"{variable} must be a whole number, got {raw!r}") from None
    if value < 1:
        raise ConfigurationError(f"{variable} must be at least 1, got {value}")
    return value


class BudgetedPool(ConnectionPool[Connection[Any]]):
    """A sync pool whose timeout says which setting to raise."""

    def __init__(self, conninfo: str, *, size_variable: str, **kwargs: Any) -> None:
        self.size_variable = size_variable
        super().__init__(conninfo, **kwargs)

    def getconn(self, timeout: float | None = None) -> Connection[Any]:
        try:
            return super().getconn(timeout)
        except NoConnectionError:
            raise
        except PoolTimeout:
            waited = self.timeout if timeout is None else timeout
            refused = probe(_conninfo(self.conninfo))
        if refused is not None:
            raise DatabaseRefusedError(refused_line(self.name, _conninfo(self.conninfo), refused))
        raise exhausted(self.name, self.max_size, self.size_variable, waited)


class BudgetedAsyncPool(AsyncConnectionPool[AsyncConnection[Any]]):
    """The async twin of `BudgetedPool`."""

    def __init__(self, conninfo: str, *, size_variable: str, **kwargs: Any) -> None:
        self.size_variable = size_variable
        super().__init__(conninfo, **kwargs)

    async def getconn(self, timeout: float | None = None) -> AsyncConnection[Any]:
        try:
            return await super().getconn(timeout)
        except NoConnectionError:
            raise
        except PoolTimeout:
            waited = self.timeout if timeout is None else timeout
            refused = await aprobe(_conninfo(self.conninfo))
        if refused is not None:
            raise DatabaseRefusedError(refused_line(self.name, _conninfo(self.conninfo), refused))
        raise exhausted(self.name, self.max_size, self.size_variable, waited)


def _conninfo(conninfo: object) -> str:
    """The pool's target (our pools are given a fixed string)."""
    return conninfo if isinstance(conninfo, str) else ""


def exhausted(name: str, size: int, variable: str, waited_s: float) -> PoolExhaustedError:
    """The one line a full pool raises: which pool, how full, what to change."""
    return PoolExhaustedError(
        f"all {size} connections of pool {name!r} stayed in use for {waited_s:g} s: raise "
        f"{variable} (now {size}), and Postgres max_connections with it, or put a transaction "
        "pooler (PgBouncer) in front"
    )
