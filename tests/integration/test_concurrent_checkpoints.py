"""The served checkpointer under concurrency: calls over a pool run side by side (no lock),
and a step's writes that reach Postgres before the thread's first checkpoint still land."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from psycopg_pool import AsyncConnectionPool

from graphs.agent import make_graph
from recollect import user_turn
from recollect.history.persistence import PlatformPostgresSaver
from recollect.state.context import Context
from recollect.store.acting import acting_as
from recollect.store.roles import app_uri
from recollect.store.scope import Scope
from recollect.store.server import CONNECTION_KWARGS

ANA = Scope.for_user("acme", "ana")


async def _saver(uri: str, max_size: int) -> tuple[AsyncConnectionPool[Any], PlatformPostgresSaver]:
    pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
        app_uri(uri), min_size=1, max_size=max_size, kwargs=dict(CONNECTION_KWARGS), open=False
    )
    await pool.open()
    return pool, PlatformPostgresSaver(pool)


def test_writes_before_the_first_checkpoint_claim_the_thread(database_uri: str) -> None:
    async def scenario() -> Any:
        pool, saver = await _saver(database_uri, 2)
        try:
            config: Any = {
                "configurable": {
                    "thread_id": f"t-{uuid.uuid4()}",
                    "checkpoint_ns": "",
                    "checkpoint_id": str(uuid.uuid4()),
                }
            }
            with acting_as(ANA):
                await saver.aput_writes(config, [("messages", [HumanMessage("hi")])], "task-1")
                return await saver.aget_tuple(config)
        finally:
            await pool.close()

    assert (
        asyncio.run(scenario()) is None
    )  # no checkpoint yet, and no row-level security violation either


def test_concurrent_turns_share_a_small_pool_without_errors(database_uri: str) -> None:
    async def scenario() -> list[Any]:
        pool, saver = await _saver(database_uri, 3)
        agent = make_graph(checkpointer=saver)
        ctx = Context(extraction=False)

        async def talk(user: int) -> Any:
            scope = Scope.for_user("acme", f"user{user}")
            config: Any = {"configurable": {"thread_id": f"t-{user}-{uuid.uuid4()}"}}
            with acting_as(scope):
                for turn in range(3):
                    result = await agent.ainvoke(user_turn(f"turn {turn}"), config, context=ctx)
            return result

        try:
            return await asyncio.gather(*(talk(user) for user in range(12)))
        finally:
            await pool.close()

    for result in asyncio.run(scenario()):
        kinds = [type(m) for m in result["messages"]]
        assert kinds == [HumanMessage, AIMessage] * 3
