"""Recall embeds the query only when a dense search could find something for the scope."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from recollect.longterm import facts
from recollect.longterm.records import FactCategory, NewFact
from recollect.store import offload
from recollect.store.apool import close_async_pools, shared_async_pool
from recollect.store.scope import Scope
from tests.support.memory import memory_over
from tests.support.scripted_openai import ScriptedOpenAI

ANA = Scope.for_user("acme", "ana")
BEN = Scope.for_user("acme", "ben")
ANA_SESSION = Scope.for_session("acme", "ana", "s-1")


def test_an_empty_scope_is_not_embedded_and_a_filled_one_is(
    pool: ConnectionPool[Any], scripted_llm: ScriptedOpenAI
) -> None:
    memory = memory_over(pool, scripted_llm)
    memory.remember(
        BEN, NewFact(text="Ben keeps bees on his roof", category=FactCategory.PREFERENCE)
    )
    before = len(scripted_llm.embedding_requests)

    found = memory.recall(ANA, "what does Ana keep on her roof?")
    assert found.facts == ()
    assert len(scripted_llm.embedding_requests) == before  # Ben's memory is not Ana's

    memory.remember(
        ANA, NewFact(text="Ana keeps tomatoes on her roof", category=FactCategory.PREFERENCE)
    )
    before = len(scripted_llm.embedding_requests)
    for _ in range(2):  # the second recall is answered from the process's cache
        found = memory.recall(ANA, "tomatoes roof")
        assert len(scripted_llm.embedding_requests) == before + 1
        before += 1
    assert [f.fact.text for f in found.facts] == ["Ana keeps tomatoes on her roof"]
    # a session reads the user's durable memory too, so it embeds as well
    memory.recall(ANA_SESSION, "tomatoes roof")
    assert len(scripted_llm.embedding_requests) == before + 1


def test_forgotten_memory_costs_an_embedding_never_a_wrong_answer(
    pool: ConnectionPool[Any], scripted_llm: ScriptedOpenAI
) -> None:
    memory = memory_over(pool, scripted_llm)
    stored = memory.remember(
        ANA, NewFact(text="Ana keeps tomatoes on her roof", category=FactCategory.PREFERENCE)
    )
    assert memory.recall(ANA, "tomatoes roof").facts
    assert memory.forget(ANA, stored.fact.id)
    before = len(scripted_llm.embedding_requests)
    assert memory.recall(ANA, "tomatoes roof").facts == ()
    assert len(scripted_llm.embedding_requests) == before + 1


@contextmanager
def counted_checkouts(pool_type: type[Any]) -> Iterator[list[int]]:
    """Each connection a pool of `pool_type` hands out: one per transaction here."""
    checkouts: list[int] = []
    connection = pool_type.connection

    def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        checkouts.append(1)
        return connection(self, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pool_type, "connection", counted)
        yield checkouts


def test_the_presence_check_travels_with_the_fetch(
    pool: ConnectionPool[Any], scripted_llm: ScriptedOpenAI
) -> None:
    memory = memory_over(pool, scripted_llm)
    with counted_checkouts(ConnectionPool) as checkouts:
        assert memory.recall(ANA, "tomatoes roof").facts == ()
    assert len(checkouts) == 1, "an empty scope: one transaction, presence and fetch together"
    memory.remember(
        ANA, NewFact(text="Ana keeps tomatoes on her roof", category=FactCategory.PREFERENCE)
    )
    with counted_checkouts(ConnectionPool) as checkouts:
        assert memory.recall(ANA, "tomatoes roof").facts
    assert len(checkouts) == 2, "the first yes reads again, with the query embedded"
    with counted_checkouts(ConnectionPool) as checkouts:
        assert memory.recall(ANA, "tomatoes roof").facts
    assert len(checkouts) == 1, "a known yes asks no more"

    async def served(scope: Scope) -> tuple[int, int]:
        apool = await shared_async_pool(pool)
        try:
            with counted_checkouts(AsyncConnectionPool) as checkouts:
                found = await memory.arecall(apool, scope, "tomatoes roof")
            return len(checkouts), len(found.facts)
        finally:
            await close_async_pools()

    before = len(scripted_llm.embedding_requests)
    assert asyncio.run(served(BEN)) == (1, 0)
    assert len(scripted_llm.embedding_requests) == before
    assert asyncio.run(served(ANA)) == (1, 1)  # known in this process
    assert asyncio.run(served(ANA_SESSION)) == (2, 1)


def test_a_served_recall_leaves_the_loop_only_for_work(
    pool: ConnectionPool[Any], scripted_llm: ScriptedOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scope with no embedded memory plans and finishes on the loop (once a first call has
    loaded what they use, off it): no embedding, nothing to rank. One with memory embeds and
    ranks on the executor."""
    hops: list[str] = []
    offloaded = offload.offloaded

    async def counted(fn: Any, *args: Any, **kwargs: Any) -> Any:
        hops.append(getattr(fn, "__name__", getattr(getattr(fn, "func", None), "__name__", "")))
        return await offloaded(fn, *args, **kwargs)

    monkeypatch.setattr(offload, "offloaded", counted)
    monkeypatch.setattr(facts, "offloaded", counted)
    memory = memory_over(pool, scripted_llm)
    memory.remember(
        ANA, NewFact(text="Ana keeps tomatoes on her roof", category=FactCategory.PREFERENCE)
    )
    memory.recall(ANA, "tomatoes roof")  # the process now knows Ana holds embedded memory

    async def served(scope: Scope) -> int:
        apool = await shared_async_pool(pool)
        try:
            return len((await memory.arecall(apool, scope, "tomatoes roof")).facts)
        finally:
            await close_async_pools()

    assert asyncio.run(served(BEN)) == 0  # a first call loads what planning needs, off the loop
    hops.clear()
    assert asyncio.run(served(BEN)) == 0
    assert hops == [], "nothing to embed or rank: no hop off the loop"
    assert asyncio.run(served(ANA)) == 1
    assert hops == ["plan_recall", "finish"], "embedding and ranking run on the executor"


def test_a_recalled_fact_keeps_its_metadata(
    pool: ConnectionPool[Any], scripted_llm: ScriptedOpenAI
) -> None:
    """Candidates carry their metadata as JSON text; the facts a recall shows parse it back."""
    memory = memory_over(pool, scripted_llm)
    metadata = {"source": "import", "tags": ["garden", "roof"], "weight": 2}
    memory.remember(
        ANA,
        NewFact(
            text="Ana keeps tomatoes on her roof",
            category=FactCategory.PREFERENCE,
            metadata=metadata,
        ),
    )
    for query in ("tomatoes roof", "tomatoes"):  # the dense and the lexical statement
        (found,) = memory.recall(ANA, query).facts
        assert found.fact.metadata == metadata
