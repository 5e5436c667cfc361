"""The platform checkpointer can delete a run's checkpoints, which `rollback` needs, and prunes
a thread's old turns in the transaction of the turn's first checkpoint."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import psycopg
from psycopg_pool import AsyncConnectionPool

from graphs.agent import make_graph
from recollect import thread_config, user_turn
from recollect.history.persistence import PlatformPostgresSaver
from recollect.state.context import Context
from recollect.store.apool import close_async_pools
from recollect.store.roles import app_uri
from recollect.store.server import CONNECTION_KWARGS
from tests.support.db import DEFAULT_SCOPE
from tests.support.scripted_openai import ScriptedOpenAI

PLAIN = Context(org_id=DEFAULT_SCOPE.org_id, user_id=DEFAULT_SCOPE.user_id)


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


def test_a_turn_prunes_in_its_input_checkpoints_transaction(
    database_uri: str, scripted_llm: ScriptedOpenAI
) -> None:
    async def scenario() -> tuple[list[int], int, str]:
        pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
            app_uri(database_uri), kwargs=dict(CONNECTION_KWARGS), open=False
        )
        await pool.open()
        transactions: list[int] = []
        checkout = pool.connection

        def counted(*args: Any, **kwargs: Any) -> Any:
            transactions[-1] += 1
            return checkout(*args, **kwargs)

        pool.connection = counted  # type: ignore[method-assign]
        try:
            saver = PlatformPostgresSaver(pool)
            saver.retain = 2
            saver.scope = DEFAULT_SCOPE
            agent = make_graph(checkpointer=saver)
            config = thread_config("t-pruned")
            for turn in range(5):
                transactions.append(0)
                await agent.ainvoke(user_turn(f"turn {turn}"), config, context=PLAIN)
            transactions.append(0)
            state = await agent.aget_state(config)
            reply = state.values["messages"][-1].text
            return transactions, _inputs(database_uri, "t-pruned"), reply
        finally:
            await close_async_pools()
            await pool.close()

    transactions, inputs, last = asyncio.run(scenario())
    # a turn: the thread's state read, five checkpoints (the input one with its prune) and five
    # write batches (the input's, recall's, trim's, the reply's, extract's); then `aget_state`'s
    # read. (The first turn also claims the thread, once or twice as its first writes race.)
    assert transactions[1:] == [11, 11, 11, 11, 1], transactions
    assert inputs == 2, "two whole turns are kept"
    assert last == "scripted reply to: turn 4"


def _inputs(uri: str, thread: str) -> int:
    with psycopg.connect(uri, **CONNECTION_KWARGS) as conn:
        row = conn.execute(
            "SELECT count(*) AS n FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = ''"
            " AND metadata->>'source' = 'input'",
            (thread,),
        ).fetchone()
    assert row is not None
    return int(row["n"])
