"""A second pooled connection for work that can run beside the first, when one is idle.

A recall of a large scope reads its words on a second connection while the first reads its
vectors (`recollect.longterm.recall.RecallPlan.fans_out`). A pool with no connection idle
within `SPARE_WAIT` is busy serving others, and a second connection would only take one from
them: the caller then reads on one, as it would anyway. Waiting never blocks on a pool at its
limit, so two recalls each holding one connection cannot deadlock waiting for a second.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from psycopg import AsyncConnection, Connection
from psycopg_pool import AsyncConnectionPool, ConnectionPool, PoolTimeout

SPARE_WAIT = 0.001
"""Seconds to wait for a spare connection before going on with one."""


@contextmanager
def spare_connection(pool: ConnectionPool[Any], wanted: bool) -> Iterator[Connection[Any] | None]:
    """A connection from `pool` if `wanted` and one is idle at once, else None."""
    if not wanted:
        yield None
        return
    try:
        conn = pool.getconn(timeout=SPARE_WAIT)
    except PoolTimeout:
        yield None
        return
    try:
        yield conn
    finally:
        pool.putconn(conn)


@asynccontextmanager
async def aspare_connection(
    pool: AsyncConnectionPool[Any], wanted: bool
) -> AsyncIterator[AsyncConnection[Any] | None]:
    """`spare_connection` for an event loop."""
    if not wanted:
        yield None
        return
    try:
        conn = await pool.getconn(timeout=SPARE_WAIT)
    except PoolTimeout:
        yield None
        return
    try:
        yield conn
    finally:
        await pool.putconn(conn)
