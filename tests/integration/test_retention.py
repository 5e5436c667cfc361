"""Checkpoint retention: a thread keeps its newest checkpoints and nothing dangles."""

from __future__ import annotations

import operator
from collections.abc import Iterator
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.tools import tool
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.graph import END, START, StateGraph
from psycopg_pool import ConnectionPool

from graphs.agent import make_graph
from recollect import thread_config, user_turn
from recollect.history.owned_checkpoints import ScopedPostgresSaver
from recollect.history.retention import RetainingPostgresSaver, retention_from_env
from recollect.state.context import Context
from recollect.store.server import open_pool
from recollect.store.tenancy import scoped
from tests.support.db import DEFAULT_SCOPE
from tests.support.scripted_openai import ScriptedOpenAI

COUNT_ROWS_SQL = """
SELECT (SELECT count(*) FROM checkpoints WHERE thread_id = %(t)s) AS checkpoints,
       (SELECT count(*) FROM checkpoint_blobs WHERE thread_id = %(t)s) AS blobs,
       (SELECT count(*) FROM checkpoint_writes WHERE thread_id = %(t)s) AS writes
"""


@pytest.fixture
def pool(database_uri: str) -> Iterator[ConnectionPool[Any]]:
    """Retention is about rows, not tenants: these tests read and count them as the tables'
    owner (row-level security on checkpoints is tested in `test_least_privilege`)."""
    connections = open_pool(database_uri, max_size=4, name="retention")
    yield connections
    connections.close()


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


INPUT_CHECKPOINTS_SQL = """
SELECT count(*) AS n FROM checkpoints
WHERE thread_id = %(t)s AND checkpoint_ns = '' AND metadata ->> 'source' = 'input'
"""
DANGLING_PARENTS_SQL = """
SELECT count(*) AS n FROM checkpoints c
WHERE c.thread_id = %(t)s AND c.parent_checkpoint_id IS NOT NULL AND NOT EXISTS (
  SELECT 1 FROM checkpoints p WHERE p.thread_id = c.thread_id
    AND p.checkpoint_ns = c.checkpoint_ns AND p.checkpoint_id = c.parent_checkpoint_id)
"""


def scalar(pool: ConnectionPool[Any], sql: str, thread: str) -> int:
    with pool.connection() as conn:
        row = conn.execute(sql, {"t": thread}).fetchone()
    assert row is not None
    return int(row["n"])


def test_old_turns_are_pruned_whole_and_the_thread_still_resumes(
    pool: ConnectionPool[Any], scripted_llm: ScriptedOpenAI
) -> None:
    everything = ScopedPostgresSaver(pool)
    everything.retain = 0
    everything.scope = DEFAULT_SCOPE
    plain = play(everything, "t-all", 8)
    saver = ScopedPostgresSaver(pool)
    saver.retain = 2
    saver.scope = DEFAULT_SCOPE
    kept = play(saver, "t-kept", 8)
    all_rows, kept_rows = rows(pool, "t-all"), rows(pool, "t-kept")
    assert scalar(pool, INPUT_CHECKPOINTS_SQL, "t-kept") == 2, "two whole turns are kept"
    every = list(plain.get_state_history(thread_config("t-all")))
    inputs = [i for i, s in enumerate(every) if s.metadata and s.metadata["source"] == "input"]
    assert kept_rows[0] == inputs[1] + 1, "exactly the checkpoints of the last two turns"
    assert kept_rows[1] < all_rows[1]
    assert kept_rows[2] < all_rows[2]
    assert scalar(pool, DANGLING_PARENTS_SQL, "t-kept") == 0, "no parent pointer dangles"
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
    assert scalar(pool, INPUT_CHECKPOINTS_SQL, "t-kept") == 2
    assert len(kept.get_state(thread_config("t-kept")).values["messages"]) > 0


def test_a_tool_heavy_turn_does_not_eat_the_rewind_window(
    pool: ConnectionPool[Any], scripted_llm: ScriptedOpenAI
) -> None:
    saver = RetainingPostgresSaver(pool)
    saver.retain = 3
    agent = make_graph(checkpointer=saver, tools=[echo_tool])
    config = thread_config("t-tools")
    for turn in range(3):
        agent.invoke(user_turn(f"plain {turn}"), config=config, context=Context())
    for _round in range(6):
        scripted_llm.reply_tool_calls([{"name": "echo_tool", "args": {"text": "x"}}])
    scripted_llm.reply("done with tools")
    agent.invoke(user_turn("use the tool a lot"), config=config, context=Context())
    inputs = [
        s
        for s in agent.get_state_history(config)
        if s.metadata is not None and s.metadata.get("source") == "input"
    ]
    assert len(inputs) == 3, "the two turns before the tool-heavy one are still there"


@tool
def echo_tool(text: str) -> str:
    """Echo the text.

    Args:
        text: what to echo.
    """
    return text


class Counter(TypedDict):
    seen: Annotated[list[int], operator.add]
    calls: int


class Calls(TypedDict):
    calls: int


def _subgraph() -> Any:
    def bump(state: Calls) -> dict[str, Any]:
        return {"calls": state.get("calls", 0) + 1}

    sub: StateGraph[Calls] = StateGraph(Calls)
    sub.add_node("bump", bump)
    sub.add_node("bump_again", bump)
    sub.add_edge(START, "bump")
    sub.add_edge("bump", "bump_again")
    sub.add_edge("bump_again", END)
    return sub.compile()


def _parent(saver: PostgresSaver) -> Any:
    parent: StateGraph[Counter] = StateGraph(Counter)
    parent.add_node("sub", _subgraph())
    parent.add_edge(START, "sub")
    parent.add_edge("sub", END)
    return parent.compile(checkpointer=saver)


SUBGRAPH_ROWS_SQL = """
SELECT (SELECT count(*) FROM checkpoints WHERE thread_id = %(t)s AND checkpoint_ns <> '') AS n,
       (SELECT count(*) FROM checkpoint_writes WHERE thread_id = %(t)s AND checkpoint_ns <> '')
         AS writes
"""


def test_subgraph_calls_are_pruned_with_their_turn_and_rewinding_resumes_the_right_state(
    pool: ConnectionPool[Any],
) -> None:
    saver = RetainingPostgresSaver(pool)
    saver.retain = 4
    graph = _parent(saver)
    config = thread_config("t-sub")
    for run in range(12):
        graph.invoke({"seen": [run], "calls": 0}, config)
    with pool.connection() as conn:
        sub = conn.execute(SUBGRAPH_ROWS_SQL, {"t": "t-sub"}).fetchone()
    assert sub is not None
    plain = _parent(PostgresSaver(pool))
    for run in range(12):
        plain.invoke({"seen": [run], "calls": 0}, thread_config("t-sub-plain"))
    with pool.connection() as conn:
        unpruned = conn.execute(SUBGRAPH_ROWS_SQL, {"t": "t-sub-plain"}).fetchone()
    assert unpruned is not None
    assert sub["n"] <= unpruned["n"] * 5 // 12, (sub, unpruned)
    assert sub["writes"] <= unpruned["writes"] * 5 // 12, (sub, unpruned)
    assert scalar(pool, DANGLING_PARENTS_SQL, "t-sub") == 0

    oldest = list(graph.get_state_history(config))[-1]
    assert oldest.metadata is not None
    assert oldest.metadata["source"] == "input"
    assert oldest.values["seen"] == list(range(8)), "the oldest kept turn holds runs 0-7"
    graph.invoke(None, oldest.config)  # rewind: replay run 8 from its input
    assert graph.get_state(config).values["seen"] == list(range(9))


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
            for turn in range(7):
                await agent.ainvoke(user_turn(f"turn {turn}"), config=config, context=Context())
            async with pool.connection() as conn:
                cur = await conn.execute(COUNT_ROWS_SQL, {"t": "t-async"})
                before = (await cur.fetchone())["checkpoints"]
            await saver.aprune_thread(config)
            async with pool.connection() as conn:
                cur = await conn.execute(COUNT_ROWS_SQL, {"t": "t-async"})
                after = (await cur.fetchone())["checkpoints"]
                cur = await conn.execute(INPUT_CHECKPOINTS_SQL, {"t": "t-async"})
                assert (await cur.fetchone())["n"] == 4, "four whole turns are kept"
            state = await agent.aget_state(config)
            assert state.values["messages"][-1].text == "scripted reply to: turn 6"
            return before, after
        finally:
            await pool.close()

    before, after = asyncio.run(play_async())
    assert before == after, "the turn's own prune already left exactly `retain` turns"
    assert after > 4
