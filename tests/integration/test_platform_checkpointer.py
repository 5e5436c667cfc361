"""The platform checkpointer can delete a run's checkpoints, which `rollback` needs."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import psycopg
from psycopg_pool import AsyncConnectionPool

from graphs.agent import make_graph, user_turn
from recollect.history.persistence import PlatformPostgresSaver
from recollect.store.server import CONNECTION_KWARGS
from state.context import Context


def _count(uri: str, thread: str) -> int:
    with psycopg.connect(uri, **CONNECTION_KWARGS) as conn:
        row = conn.execute(
            "SELECT count(*) AS n FROM checkpoints WHERE thread_id = %s", (thread,)
        ).fetchone()
    assert row is not None
    return int(row["n"])


def test_delete_for_runs_removes_only_that_runs_checkpoints(database_uri: str) -> None:
    async def scenario() -> tuple[str, str]:
        pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
            database_uri, kwargs=dict(CONNECTION_KWARGS), open=False
        )
        await pool.open()
        try:
            saver = PlatformPostgresSaver(pool)
            agent = make_graph(checkpointer=saver)
            ctx = Context(extraction=False)
            runs = [str(uuid.uuid4()), str(uuid.uuid4())]
            for thread, run_id in zip(("keep", "drop"), runs, strict=True):
                # the LangGraph server stores each checkpoint's run id in its metadata
                config: Any = {
                    "configurable": {"thread_id": thread},
                    "metadata": {"run_id": run_id},
                }
                await agent.ainvoke(user_turn("hi"), config, context=ctx)
            await saver.adelete_for_runs([runs[1]])
            return runs[0], runs[1]
        finally:
            await pool.close()

    asyncio.run(scenario())
    assert _count(database_uri, "keep") > 0
    assert _count(database_uri, "drop") == 0
