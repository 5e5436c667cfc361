"""The served path's async checkpointer over its own pool, for tests that run graphs as the
served API does (`ainvoke`/`astream` on an event loop)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from psycopg_pool import AsyncConnectionPool

from recollect.history.owned_checkpoints import AsyncScopedPostgresSaver
from recollect.store.apool import close_async_pools
from recollect.store.roles import app_uri
from recollect.store.scope import Scope
from recollect.store.server import CONNECTION_KWARGS


@asynccontextmanager
async def served_saver(database_uri: str, scope: Scope) -> AsyncIterator[AsyncScopedPostgresSaver]:
    """A saver acting as `scope`, as the app role; its pool and the loop's async pools are
    closed on exit."""
    apool: AsyncConnectionPool[Any] = AsyncConnectionPool(
        app_uri(database_uri), kwargs=dict(CONNECTION_KWARGS), open=False
    )
    await apool.open()
    saver = AsyncScopedPostgresSaver(apool)
    saver.scope = scope
    try:
        yield saver
    finally:
        await close_async_pools()
        await apool.close()
