"""Checkpoint retention: a thread keeps its newest checkpoints and nothing dangles."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg_pool import ConnectionPool

from graphs.agent import make_graph, thread_config, user_turn
from recollect.history.owned_checkpoints import ScopedPostgresSaver
from recollect.history.retention import retention_from_env
from recollect.store.tenancy import scoped
from state.context import Context
from tests.support.db import DEFAULT_SCOPE
from tests.support.scripted_openai import ScriptedOpenAI

COUNT_ROWS_SQL = """
SELECT (SELECT count(*) FROM checkpoints WHERE thread_id = %(t)s) AS checkpoints,
       (SELECT count(*) FROM checkpoint_blobs WHERE thread_id = %(t)s) AS blobs,
       (SELECT count(*) FROM checkpoint_writes WHERE thread_id = %(t)s) AS writes
"""


def rows(pool: ConnectionPool[Any], thread: str) -> tuple[int, int, int]:
    with scoped(pool, DEFAULT_SCOPE) as conn:  # checkpoints sit behind row-level security
        row = conn.execute(COUNT_ROWS_SQL, {"t": thread}).fetchone()
    assert row is not None
    return row["checkpoints"], row["blobs"], row["writes"]


def play(saver: PostgresSaver, thread: str, turns: int) -> Any:
    agent = make_graph(checkpointer=saver)
    for turn in range(turns):
        agent.invoke(
            user_turn(f"turn {turn} " + "words " * 30),
            config=thread_config(thread),
            context=Context(max_history_tokens=200),
        )
    return agent


def test_old_checkpoints_are_pruned_and_the_thread_still_resumes(
    pool: ConnectionPool[Any], scripted_llm: ScriptedOpenAI
) -> None:
    everything = ScopedPostgresSaver(pool)
    everything.retain = 0
    everything.scope = DEFAULT_SCOPE
    plain = play(everything, "t-all", 8)
    saver = ScopedPostgresSaver(pool)
    saver.retain = 6
    saver.scope = DEFAULT_SCOPE
    kept = play(saver, "t-kept", 8)
    all_rows, kept_rows = rows(pool, "t-all"), rows(pool, "t-kept")
    assert 6 <= kept_rows[0] <= 9, "between retain and 1.5 x retain, pruned every 3 steps"
    assert all_rows[0] > 30
    assert kept_rows[1] < all_rows[1]
    assert kept_rows[2] < all_rows[2]
    history = list(kept.get_state_history(thread_config("t-kept")))
    assert len(history) == kept_rows[0]
    full = list(plain.get_state_history(thread_config("t-all")))[: len(history)]
    for retained, original in zip(history, full, strict=True):  # every kept one loads whole
        assert retained.values.keys() == original.values.keys()
        assert [m.text for m in retained.values["messages"]] == [
            m.text for m in original.values["messages"]
        ]
    latest = kept.get_state(thread_config("t-kept")).values
    expected = plain.get_state(thread_config("t-all")).values
    assert [m.text for m in latest["messages"]] == [m.text for m in expected["messages"]]
    kept.invoke(user_turn("one more"), config=thread_config("t-kept"), context=Context())
    assert 6 <= rows(pool, "t-kept")[0] <= 9
    saver.prune_thread(thread_config("t-kept"))
    assert rows(pool, "t-kept")[0] == 6, "an explicit prune leaves exactly `retain`"
    assert len(kept.get_state(thread_config("t-kept")).values["messages"]) > 0


def test_retention_setting_rejects_bad_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECOLLECT_CHECKPOINT_RETENTION", "lots")
    with pytest.raises(ValueError, match="whole number"):
        retention_from_env()
    monkeypatch.setenv("RECOLLECT_CHECKPOINT_RETENTION", "-1")
    with pytest.raises(ValueError, match="0 or more"):
        retention_from_env()
    monkeypatch.setenv("RECOLLECT_CHECKPOINT_RETENTION", "0")
    assert retention_from_env() == 0


def test_the_async_saver_prunes_the_same_way(
    database_uri: str, scripted_llm: ScriptedOpenAI
) -> None:
    import asyncio

    from psycopg_pool import AsyncConnectionPool

    from recollect.history.retention import AsyncRetainingPostgresSaver
    from recollect.store.server import CONNECTION_KWARGS

    async def play_async() -> tuple[int, int]:
        pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
            database_uri, min_size=1, max_size=2, kwargs=dict(CONNECTION_KWARGS), open=False
        )
        await pool.open(wait=True)
        try:
            saver = AsyncRetainingPostgresSaver(pool)
            saver.retain = 4
            agent = make_graph(checkpointer=saver)
            config = thread_config("t-async")
            for turn in range(5):
                await agent.ainvoke(user_turn(f"turn {turn}"), config=config, context=Context())
            async with pool.connection() as conn:
                cur = await conn.execute(COUNT_ROWS_SQL, {"t": "t-async"})
                before = (await cur.fetchone())["checkpoints"]
            await saver.aprune_thread(config)
            async with pool.connection() as conn:
                cur = await conn.execute(COUNT_ROWS_SQL, {"t": "t-async"})
                after = (await cur.fetchone())["checkpoints"]
            state = await agent.aget_state(config)
            assert state.values["messages"][-1].text == "scripted reply to: turn 4"
            return before, after
        finally:
            await pool.close()

    before, after = asyncio.run(play_async())
    assert 4 <= before <= 6
    assert after == 4
