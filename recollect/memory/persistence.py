"""Open the database for a process: resolve it, migrate it, hand out a pool and checkpointer."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any

import psycopg
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from recollect.memory import migrations
from recollect.memory.db import CONNECTION_KWARGS, check_reachable, open_pool, resolve_uri
from recollect.memory.retention import (
    AsyncRetainingPostgresSaver,
    RetainingPostgresSaver,
    retention_from_env,
)


@dataclass(frozen=True)
class Persistence:
    """What a process needs to run graphs durably."""

    uri: str
    pool: ConnectionPool[Any]
    checkpointer: PostgresSaver
    schema_version: int


def migrate(uri: str) -> int:
    """Bring the database to the current schema; safe to call from many processes at once."""
    check_reachable(uri)
    with psycopg.connect(uri, **CONNECTION_KWARGS) as conn:
        return migrations.setup(conn)


@contextmanager
def open_persistence(uri: str | None = None, *, announce: bool = True) -> Iterator[Persistence]:
    """Resolve (or start) the database, migrate it, and close the pool on exit."""
    target = uri or resolve_uri(announce=announce)
    version = migrate(target)
    retain = retention_from_env()
    pool = open_pool(target)
    saver = RetainingPostgresSaver(pool)
    saver.retain = retain
    try:
        yield Persistence(target, pool, saver, version)
    finally:
        pool.close()


@asynccontextmanager
async def platform_checkpointer() -> AsyncIterator[AsyncPostgresSaver]:
    """Checkpointer for `langgraph dev` (via `langgraph.json`), persisting to our Postgres.

    It keeps the newest `RECOLLECT_CHECKPOINT_RETENTION` checkpoints of each thread.
    """
    target = await asyncio.to_thread(resolve_uri)  # blocking work stays off the event loop
    await asyncio.to_thread(migrate, target)
    retain = retention_from_env()
    pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
        target, min_size=1, max_size=8, kwargs=dict(CONNECTION_KWARGS), open=False
    )
    await pool.open(wait=True)
    try:
        saver = AsyncRetainingPostgresSaver(pool)
        saver.retain = retain
        yield saver
    finally:
        await pool.close()
