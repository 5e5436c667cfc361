"""Open the database for a process: resolve it, migrate it, hand out a pool and checkpointer."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import CheckpointTuple
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg_pool import ConnectionPool

from recollect.history.owned_checkpoints import AsyncScopedPostgresSaver, ScopedPostgresSaver
from recollect.history.retention import retention_from_env
from recollect.store.apool import adopt_async_pool, open_async_pool
from recollect.store.budget import pool_size
from recollect.store.errors import DatabaseUnavailableError
from recollect.store.heap import settle_enabled, settle_heap
from recollect.store.migrations import prepare
from recollect.store.pool import install_process_pool, run_before_closing
from recollect.store.roles import app_uri, login_hint, worker_uri
from recollect.store.scope import Scope
from recollect.store.server import open_pool, prepared_statements, redact_password, resolve_uri


@dataclass(frozen=True)
class Persistence:
    """What a process needs to run graphs durably."""

    uri: str
    """Admin URI (migrations only)."""
    pool: ConnectionPool[Any]
    """Connections as the app role, which row-level security binds."""
    checkpointer: ScopedPostgresSaver
    """Checkpoints as the acting identity (see `owned_checkpoints`): `scope` when nothing
    else acts."""
    schema_version: int
    worker_pool: ConnectionPool[Any] | None = None
    """Connections as the worker role (the background worker and operator commands, which
    reach every tenant's jobs through the definer functions); None unless asked for."""

    @property
    def worker(self) -> ConnectionPool[Any]:
        """The worker role's pool; `open_persistence(worker=True)` opens it."""
        if self.worker_pool is None:
            raise RuntimeError("open_persistence(worker=True) opens the worker role's pool")
        return self.worker_pool


@contextmanager
def open_persistence(
    uri: str | None = None,
    *,
    announce: bool = True,
    scope: Scope | None = None,
    worker: bool = False,
) -> Iterator[Persistence]:
    """Resolve (or start) the database, migrate it, and close the pools on exit, after the
    writes still queued for them (turn traces); graph steps reach the app pool through
    `shared_pool()` meanwhile."""
    target = uri or resolve_uri(announce=announce)
    version = prepare(target)
    retain = retention_from_env()
    pool = open_pool(app_uri(target))
    saver = ScopedPostgresSaver(pool)
    saver.retain = retain
    saver.scope = scope
    workers = open_worker_pool(target) if worker else None
    try:
        with install_process_pool(pool):
            yield Persistence(target, pool, saver, version, workers)
    finally:
        run_before_closing()
        if workers is not None:
            workers.close()
        pool.close()


def open_worker_pool(target: str) -> ConnectionPool[Any]:
    """The worker role's pool; a role that cannot log in is named with what to set."""
    try:
        return open_pool(worker_uri(target), max_size=2, name="recollect-worker")
    except DatabaseUnavailableError as exc:
        hint = login_hint("worker", exc.reason)
        if hint is None:
            raise
        raise DatabaseUnavailableError(redact_password(target), exc.reason, hint) from exc


DELETE_WRITES_FOR_RUNS = """
DELETE FROM checkpoint_writes AS w
USING checkpoints AS c
WHERE c.metadata->>'run_id' = ANY(%(run_ids)s)
  AND w.thread_id = c.thread_id AND w.checkpoint_ns = c.checkpoint_ns
  AND w.checkpoint_id = c.checkpoint_id
"""

DELETE_CHECKPOINTS_FOR_RUNS = "DELETE FROM checkpoints WHERE metadata->>'run_id' = ANY(%(run_ids)s)"


class PlatformPostgresSaver(AsyncScopedPostgresSaver):
    """The retaining async saver plus `adelete_for_runs`, which the LangGraph server needs for
    `multitask_strategy="rollback"` (how the `memory` graph is debounced). Blobs are shared
    between checkpoints and are left in place. The first run's state read settles the
    process's heap (`store.heap`): by then the server has loaded every graph."""

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        settle_heap()
        return await super().aget_tuple(config)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        params = {"run_ids": [str(run_id) for run_id in run_ids]}
        async with self._cursor(pipeline=True) as cur:
            await cur.execute(DELETE_WRITES_FOR_RUNS, params)
            await cur.execute(DELETE_CHECKPOINTS_FOR_RUNS, params)


@asynccontextmanager
async def platform_checkpointer() -> AsyncIterator[AsyncPostgresSaver]:
    """Checkpointer for `langgraph dev` (via `langgraph.json`), persisting to our Postgres.

    It keeps the newest `RECOLLECT_CHECKPOINT_RETENTION` turns of each thread.
    """
    settle_enabled()  # a bad setting stops the server at start, with one line
    prepared_statements()
    pool_size()
    target = await asyncio.to_thread(resolve_uri)  # blocking work stays off the event loop
    await asyncio.to_thread(prepare, target)
    retain = retention_from_env()
    pool = open_async_pool(app_uri(target), name="recollect-checkpoints")
    await pool.open(wait=True)
    try:
        async with adopt_async_pool(pool):  # the async steps share it: one async pool
            saver = PlatformPostgresSaver(pool)
            saver.retain = retain
            yield saver
    finally:
        await asyncio.to_thread(run_before_closing)  # the server is shutting down: traces first
        await pool.close()
