"""The steps one agent turn passes through (the design card's: recall ∥ trim, call_model,
summarize when a fold is due, extract) and the checkpoints they cost, and that its extraction
enqueue happens exactly once, in the `extract` step, for the sync (CLI) and async (served)
forms alike."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from langchain_core.tracers.schemas import Run
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg_pool import ConnectionPool

import recollect.prebuilt.extract
from graphs.agent import make_graph
from recollect import thread_config, user_turn
from recollect.extraction.queue import BufferedMessage, QueueUnavailableError
from recollect.state.context import Context
from tests.integration.test_async_twins import _queued
from tests.integration.test_trace import RecordingTracer
from tests.support.db import DEFAULT_SCOPE
from tests.support.scripted_openai import ScriptedOpenAI
from tests.support.served_saver import served_saver

SCOPE = DEFAULT_SCOPE
PLAIN = Context(org_id=SCOPE.org_id, user_id=SCOPE.user_id, extract_after_idle_s=3600)
FOLDING = Context(
    org_id=SCOPE.org_id,
    user_id=SCOPE.user_id,
    max_history_tokens=150,
    extract_after_idle_s=3600,
    extract_every_turns=99,
)
"""A history budget so small that later turns fold, and so pass through `summarize`."""
TURNS = [f"turn {i}: I keep {i} plants on the balcony " + "and water them " * 6 for i in range(6)]


@contextmanager
def counted_enqueues() -> Iterator[list[str]]:
    """Every enqueue the agent makes, by form, around the real transaction."""
    calls: list[str] = []
    sync, asynchronous = (
        recollect.prebuilt.extract.queue_for_extraction,
        recollect.prebuilt.extract.aqueue_for_extraction,
    )

    def counted(*args: Any) -> None:
        calls.append("sync")
        sync(*args)

    async def acounted(*args: Any) -> None:
        calls.append("async")
        await asynchronous(*args)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(recollect.prebuilt.extract, "queue_for_extraction", counted)
        patch.setattr(recollect.prebuilt.extract, "aqueue_for_extraction", acounted)
        yield calls


@contextmanager
def sent_enqueues(failing: frozenset[int] = frozenset()) -> Iterator[list[list[str]]]:
    """The user messages each enqueue hands over, in order; the calls numbered in `failing`
    (from 0) find the database away, as `QueueUnavailableError`, before the real transaction."""
    sent: list[list[str]] = []
    sync, asynchronous = (
        recollect.prebuilt.extract.queue_for_extraction,
        recollect.prebuilt.extract.aqueue_for_extraction,
    )

    def record(messages: list[BufferedMessage]) -> None:
        sent.append([m.content for m in messages if m.role == "user"])
        if len(sent) - 1 in failing:
            raise QueueUnavailableError("the database is away")

    def recorded(
        ctx: Context, thread: str, messages: list[BufferedMessage], held: bool = False
    ) -> None:
        record(messages)
        sync(ctx, thread, messages, held)

    async def arecorded(
        ctx: Context, thread: str, messages: list[BufferedMessage], held: bool = False
    ) -> None:
        record(messages)
        await asynchronous(ctx, thread, messages, held)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(recollect.prebuilt.extract, "queue_for_extraction", recorded)
        patch.setattr(recollect.prebuilt.extract, "aqueue_for_extraction", arecorded)
        yield sent


def _steps(chunks: list[dict[str, Any]]) -> list[str]:
    return [name for chunk in chunks for name in chunk]


def test_a_plain_turn_is_the_cards_steps_and_five_checkpoints(
    pool: ConnectionPool[Any], checkpointer: PostgresSaver, scripted_llm: ScriptedOpenAI
) -> None:
    agent = make_graph(checkpointer=checkpointer)
    config = thread_config("t-plain")
    with counted_enqueues() as calls:
        chunks = list(agent.stream(user_turn("hello there"), config, context=PLAIN))
    steps = _steps(chunks)
    assert sorted(steps[:2]) == ["recall", "trim"]  # one superstep, side by side
    assert steps[2:] == ["call_model", "extract"]
    assert len(list(checkpointer.list(config))) == 5  # input, start, recall ∥ trim, reply, extract
    assert calls == ["sync"]
    queued = _queued(pool, "t-plain")
    assert [m["role"] for m in queued["messages"]] == ["user", "assistant"]
    assert queued["jobs"][0]["turns"] == 1
    reply = agent.get_state(config).values["messages"][-1]
    assert queued["messages"][1]["message_id"] == reply.id, "queued as checkpointed"


def test_a_turns_trace_names_each_step_of_the_card_once(
    pool: ConnectionPool[Any], checkpointer: PostgresSaver, scripted_llm: ScriptedOpenAI
) -> None:
    agent = make_graph(checkpointer=checkpointer)
    tracer = RecordingTracer()
    agent.invoke(
        user_turn("hi"), {**thread_config("t-traced"), "callbacks": [tracer]}, context=PLAIN
    )
    by_id: dict[str, Run] = {str(r.id): r for r in tracer.finished}
    [root] = [r for r in tracer.finished if r.parent_run_id is None]
    steps = [r.name for r in tracer.finished if str(r.parent_run_id) == str(root.id)]
    assert sorted(set(steps) - {"__start__"}) == ["call_model", "extract", "recall", "trim"]
    assert len(steps) == len(set(steps))
    [extract] = [r for r in tracer.finished if r.name == "extract"]
    assert by_id[str(extract.parent_run_id)] is root


def _sync_turns(agent: Any, thread: str, ctx: Context) -> list[list[str]]:
    return [
        _steps(list(agent.stream(user_turn(text), thread_config(thread), context=ctx)))
        for text in TURNS
    ]


def _async_turns(database_uri: str, thread: str, ctx: Context) -> list[list[str]]:
    async def scenario() -> list[list[str]]:
        async with served_saver(database_uri, SCOPE) as saver:
            served = make_graph(checkpointer=saver)
            config = thread_config(thread)
            turns = [served.astream(user_turn(text), config, context=ctx) for text in TURNS]
            return [_steps([chunk async for chunk in turn]) for turn in turns]

    return asyncio.run(scenario())


@pytest.mark.parametrize("form", ["sync", "async"])
def test_each_turn_is_queued_exactly_once_folding_or_not(
    form: str,
    pool: ConnectionPool[Any],
    database_uri: str,
    checkpointer: PostgresSaver,
    scripted_llm: ScriptedOpenAI,
) -> None:
    run: Callable[[str, Context], list[list[str]]] = (
        (lambda thread, ctx: _sync_turns(make_graph(checkpointer=checkpointer), thread, ctx))
        if form == "sync"
        else (lambda thread, ctx: _async_turns(database_uri, thread, ctx))
    )
    with counted_enqueues() as calls:
        steps = run("t-folding", FOLDING)
    folded = [s for s in steps if "summarize" in s]
    assert folded, "the small history budget made some turns fold"
    assert len(folded) < len(steps), "and some did not"
    assert all(s[-2:] == ["summarize", "extract"] for s in folded)
    assert all(s[-2:] == ["call_model", "extract"] for s in steps if "summarize" not in s)
    assert calls == [form] * len(TURNS)
    queued = _queued(pool, "t-folding")
    assert [m["role"] for m in queued["messages"]] == ["user", "assistant"] * len(TURNS)
    assert queued["jobs"][0]["turns"] == len(TURNS)


@pytest.mark.parametrize("form", ["sync", "async"])
@pytest.mark.parametrize("ctx", [PLAIN, FOLDING], ids=["plain", "folding"])
def test_each_turn_sends_only_what_follows_the_last_queued_message(
    pool: ConnectionPool[Any],
    checkpointer: PostgresSaver,
    database_uri: str,
    scripted_llm: ScriptedOpenAI,
    form: str,
    ctx: Context,
) -> None:
    thread = f"t-sent-{form}-{ctx.max_history_tokens}"
    with sent_enqueues() as sent:
        if form == "sync":
            _sync_turns(make_graph(checkpointer=checkpointer), thread, ctx)
        else:
            _async_turns(database_uri, thread, ctx)
    assert sent == [[text] for text in TURNS]  # trimmed and folded ones were queued already
    assert [m["content"] for m in _queued(pool, thread)["messages"] if m["role"] == "user"] == TURNS


@pytest.mark.parametrize("form", ["sync", "async"])
def test_a_failed_enqueue_is_sent_again_by_the_next_turn(
    pool: ConnectionPool[Any],
    checkpointer: PostgresSaver,
    database_uri: str,
    scripted_llm: ScriptedOpenAI,
    form: str,
) -> None:
    thread = f"t-retry-{form}"
    with sent_enqueues(failing=frozenset({1, 2})) as sent:
        if form == "sync":
            _sync_turns(make_graph(checkpointer=checkpointer), thread, PLAIN)
        else:
            _async_turns(database_uri, thread, PLAIN)
    assert sent[:4] == [TURNS[:1], TURNS[1:2], TURNS[1:3], TURNS[1:4]]
    assert sent[4:] == [[text] for text in TURNS[4:]]
    queued = _queued(pool, thread)
    assert [m["content"] for m in queued["messages"] if m["role"] == "user"] == TURNS
    assert queued["jobs"][0]["turns"] == len(TURNS)
