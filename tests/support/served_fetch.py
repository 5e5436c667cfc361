"""A recall's reads as the served path makes them: on the async pool, with a spare connection
beside the first when the plan fans out."""

from __future__ import annotations

import asyncio
from typing import Any

from psycopg_pool import ConnectionPool

from recollect.longterm.recall import Fetched, RecallPlan, afetch
from recollect.store.apool import close_async_pools, shared_async_pool
from recollect.store.spare_connections import aspare_connection


def served_fetch(pool: ConnectionPool[Any], plan: RecallPlan) -> Fetched:
    """`afetch` of `plan` on the async pool beside `pool`, two connections open and idle first,
    so a plan that fans out is given its spare one (asserted)."""

    async def fetched() -> Fetched:
        apool = await shared_async_pool(pool)
        try:
            async with apool.connection(), apool.connection():
                pass  # two connections open and idle
            async with apool.connection() as conn, aspare_connection(apool, plan.fans_out) as spare:
                assert (spare is not None) == plan.fans_out
                return await afetch(conn, plan, spare)
        finally:
            await close_async_pools()

    return asyncio.run(fetched())
