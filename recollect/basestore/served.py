"""The store `langgraph.json` names (`"store": {"path": ...:make_store}`): `langgraph dev`
and LangGraph Platform serve `/store/*`, Studio's store view and every graph's
`runtime.store` from it, over the same Postgres and configured engine as the graphs' memory.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from recollect.basestore.store import RecollectStore
from recollect.longterm.configured import configured_memory
from recollect.store.pool import shared_pool


@asynccontextmanager
async def make_store() -> AsyncIterator[RecollectStore]:
    """The configured engine as a `BaseStore`; the process's shared pool (opened, and the
    schema prepared, on first use) carries it, so nodes and the store share connections."""
    pool = await asyncio.to_thread(shared_pool)  # blocking work stays off the event loop
    memory = await asyncio.to_thread(configured_memory, pool)
    yield RecollectStore(memory)
