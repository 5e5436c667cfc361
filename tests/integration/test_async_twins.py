"""The async forms the served API runs give what the sync forms the CLI runs give, on the
same data: the extraction queue's transaction, the agent's whole turn, and the pools' check
that replaces a connection the server ended; and the queue's transaction and a recall cost
the served path one round trip each."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any

import psycopg
import pytest
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from graphs.agent import make_graph
from recollect import thread_config, user_turn
from recollect.extraction import queue as jobs
from recollect.longterm.configured import configured_memory
from recollect.state.context import Context
from recollect.store.apool import close_async_pools, shared_async_pool
from recollect.store.liveness import acheck_connection, check_connection, quiet
from recollect.store.server import CONNECTION_KWARGS
from tests.integration.test_engine_recall import ANA, BEN, NOW, ingest
from tests.support.db import DEFAULT_SCOPE, all_rows, superuser_conninfo
from tests.support.langgraph_dev import free_port
from tests.support.round_trips import round_trips
from tests.support.scripted_openai import ScriptedOpenAI
from tests.support.served_saver import served_saver

SCOPE = DEFAULT_SCOPE
M = jobs.BufferedMessage

BATCHES: list[tuple[str, list[jobs.BufferedMessage], jobs.Debounce]] = [
    ("a first user turn", [M("u1", "user", "I moved to Lisbon")], jobs.Debounce(60, 3)),
    ("the same turn again", [M("u1", "user", "I moved to Lisbon")], jobs.Debounce(60, 3)),
    ("only a reply", [M("a1", "assistant", "Noted, Lisbon.")], jobs.Debounce(60, 3)),
    (
        "old and new together",
        [M("u1", "user", "I moved to Lisbon"), M("u2", "user", "Mi hermana es enfermera")],
        jobs.Debounce(60, 3),
    ),
    (
        "two turns at once, reaching every_turns",
        [M("u3", "user", "我喜欢骑自行车"), M("a3", "assistant", "ok"), M("u4", "user", "x" * 500)],
        jobs.Debounce(60, 3),
    ),
    ("after the job is due", [M("u5", "user", "my order is 88412-B")], jobs.Debounce(0, 1)),
    ("nothing at all", [], jobs.Debounce(60, 3)),
]
"""Batches as the extract node hands them over, in order: new, repeated, reply-only, mixed,
several scripts, a due job."""


def _queued(pool: ConnectionPool[Any], thread: str) -> dict[str, Any]:
    messages = all_rows(
        pool,
        "SELECT message_id, role, content FROM memory_job_messages WHERE thread_id = %s "
        "ORDER BY seq",
        thread,
    )
    job = all_rows(
        pool,
        "SELECT turns, status, model, min_confidence, run_after <= now() AS due "
        "FROM memory_jobs WHERE thread_id = %s",
        thread,
    )
    return {"messages": messages, "jobs": job}


def _outcome(result: int | None) -> str:
    return "none" if result is None else "job"


def test_enqueue_and_aenqueue_queue_the_same(pool: ConnectionPool[Any]) -> None:
    sync_results = [
        _outcome(jobs.enqueue(pool, SCOPE, "t-sync", batch, debounce=d, model="m"))
        for _, batch, d in BATCHES
    ]

    async def scenario() -> list[str]:
        apool = await shared_async_pool()  # the test's database, as the served path finds it
        try:
            return [
                _outcome(await jobs.aenqueue(apool, SCOPE, "t-async", batch, debounce=d, model="m"))
                for _, batch, d in BATCHES
            ]
        finally:
            await close_async_pools()

    async_results = asyncio.run(scenario())
    assert sync_results == ["job", "none", "none", "job", "job", "job", "none"]
    assert async_results == sync_results
    assert _queued(pool, "t-async") == _queued(pool, "t-sync")


def test_aenqueue_says_when_the_database_is_away() -> None:
    async def scenario() -> None:
        nowhere = f"postgresql://app@127.0.0.1:{free_port()}/none?connect_timeout=1"
        apool: AsyncConnectionPool[Any] = AsyncConnectionPool(
            nowhere, min_size=0, max_size=1, timeout=1, reconnect_timeout=1, open=False
        )
        await apool.open()
        try:
            with pytest.raises(jobs.QueueUnavailableError, match="cannot queue thread t-gone"):
                await jobs.aenqueue(
                    apool, SCOPE, "t-gone", [M("u", "user", "hi")], debounce=jobs.Debounce()
                )
        finally:
            await apool.close()

    asyncio.run(scenario())


CONVERSATION: Sequence[str] = (
    "Hi, I am Dana and my badge is BX-77",
    "Please remember that I cycle to work every day",
    "¿Qué sabes de mí?",
    "short",
    "what is my badge?",
)


def test_the_agent_queues_and_answers_the_same_sync_and_async(
    pool: ConnectionPool[Any],
    database_uri: str,
    checkpointer: PostgresSaver,
    scripted_llm: ScriptedOpenAI,
) -> None:
    ctx = Context(org_id=SCOPE.org_id, user_id=SCOPE.user_id, extract_every_turns=2)
    agent = make_graph(checkpointer=checkpointer)
    sync_replies = [
        agent.invoke(user_turn(text), thread_config("t-sync"), context=ctx)["messages"][-1].text
        for text in CONVERSATION
    ]

    async def scenario() -> list[str]:
        async with served_saver(database_uri, SCOPE) as saver:
            served = make_graph(checkpointer=saver)
            return [
                (await served.ainvoke(user_turn(text), thread_config("t-async"), context=ctx))[
                    "messages"
                ][-1].text
                for text in CONVERSATION
            ]

    async_replies = asyncio.run(scenario())
    assert async_replies == sync_replies
    synced, awaited = _queued(pool, "t-sync"), _queued(pool, "t-async")
    assert [(m["role"], m["content"]) for m in awaited["messages"]] == [
        (m["role"], m["content"]) for m in synced["messages"]
    ]
    assert len(synced["messages"]) == 2 * len(CONVERSATION)
    assert awaited["jobs"] == synced["jobs"]


def _terminate(pool: ConnectionPool[Any], pid: int) -> None:
    with psycopg.connect(superuser_conninfo(pool), autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s, 5000)", (pid,))


def test_a_connection_the_server_ended_is_replaced_not_handed_out(
    pool: ConnectionPool[Any],
) -> None:
    conninfo = superuser_conninfo(pool)  # any login will do; one connection, so it is reused
    single: ConnectionPool[Any] = ConnectionPool(
        conninfo, min_size=1, max_size=1, kwargs=dict(CONNECTION_KWARGS), check=check_connection
    )
    with single:
        with single.connection() as conn:
            assert quiet(conn)
            pid = conn.info.backend_pid
        _terminate(pool, pid)
        with single.connection() as conn:  # the check found it dead; the pool made another
            assert conn.info.backend_pid != pid
            conn.execute("SELECT 1")

    async def scenario() -> None:
        apool: AsyncConnectionPool[Any] = AsyncConnectionPool(
            conninfo,
            min_size=1,
            max_size=1,
            kwargs=dict(CONNECTION_KWARGS),
            check=acheck_connection,
            open=False,
        )
        await apool.open(wait=True)
        try:
            async with apool.connection() as conn:
                assert quiet(conn)
                apid = conn.info.backend_pid
            await asyncio.to_thread(_terminate, pool, apid)
            async with apool.connection() as conn:
                assert conn.info.backend_pid != apid
                await conn.execute("SELECT 1")
        finally:
            await apool.close()

    asyncio.run(scenario())


RECALL_QUERIES: Sequence[str] = (
    "what is Ana's cat called?",
    "which framework does the frontend use",
    "¿Qué carrera está preparando Ana?",
    "marathon",
    "quantum chromodynamics lecture notes",
    "",
    "?!",
)
"""A direct question, a paraphrase, another language, one word, an off-topic query, nothing,
and no content at all."""


def test_recall_and_arecall_return_the_same(pool: ConnectionPool[Any]) -> None:
    served = configured_memory(pool)  # the default engine: dense, lexical, late interaction
    ingest(served)
    cli = configured_memory(pool)
    for scope in (ANA, BEN):  # BEN has no memory: the dense half is skipped for him
        expected = [cli.recall(scope, q, token_budget=300, now=NOW) for q in RECALL_QUERIES]

        async def scenario(scope: Any = scope) -> list[Any]:
            apool = await shared_async_pool(served.pool)
            try:
                return [
                    await served.arecall(apool, scope, q, token_budget=300, now=NOW)
                    for q in RECALL_QUERIES
                ]
            finally:
                await close_async_pools()

        got = asyncio.run(scenario())
        assert got == expected
        if scope is ANA:
            assert all(found.profile or found.facts for found in got[:4])
            assert "Pixel" in got[0].facts[0].fact.text


def test_the_served_enqueue_and_recall_are_one_round_trip_each(pool: ConnectionPool[Any]) -> None:
    served = configured_memory(pool)

    async def scenario() -> list[int]:
        apool = await shared_async_pool(pool)
        trips = []
        try:
            for turn in range(2):
                message = [M(f"u{turn}", "user", "I moved to Lisbon")]
                with round_trips() as count:
                    await jobs.aenqueue(apool, SCOPE, "t-trips", message, debounce=jobs.Debounce())
                trips.append(count[0])
                with round_trips() as count:  # BEN has no memory: the probe rides along
                    await served.arecall(apool, BEN, "where do I live?", now=NOW)
                trips.append(count[0])
        finally:
            await close_async_pools()
        return trips

    assert asyncio.run(scenario()) == [1, 1, 1, 1]
    assert _queued(pool, "t-trips")["jobs"][0]["turns"] == 2


def test_the_served_recall_opens_its_engine_once_off_the_loop(
    pool: ConnectionPool[Any], database_uri: str, scripted_llm: ScriptedOpenAI
) -> None:
    opened: list[bool] = []
    engine = configured_memory(pool)
    ingest(engine, ANA)

    def process_engine() -> Any:  # a source that blocks, as `process_memory` does once
        opened.append(threading.current_thread() is threading.main_thread())
        return engine

    async def scenario() -> list[list[str]]:
        async with served_saver(database_uri, ANA) as saver:
            served = make_graph(checkpointer=saver, memory=process_engine)
            ctx = Context(org_id=ANA.org_id, user_id=ANA.user_id)
            asked = ("what is Ana's cat called?", "the cat, Pixel?", "and her cat?")
            return [
                [
                    item["text"]
                    for item in (
                        await served.ainvoke(user_turn(text), thread_config("t-open"), context=ctx)
                    )["recalled"]
                ]
                for text in asked
            ]

    recalled = asyncio.run(scenario())
    assert all(any("Pixel" in text for text in texts) for texts in recalled)
    assert opened == [False]  # asked once, on a thread other than the loop's
