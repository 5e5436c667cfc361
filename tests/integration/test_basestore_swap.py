"""The agent's recall over `runtime.store`: a graph built without the engine recalls from
whatever `BaseStore` it was compiled with, LangGraph's own or ours, and the engine stays the
default when both are there."""

from __future__ import annotations

import json
from typing import Any

from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from psycopg_pool import ConnectionPool

from graphs.agent import make_graph
from recollect import thread_config, user_turn
from recollect.basestore.store import RecollectStore
from recollect.longterm.records import FactCategory, NewFact
from recollect.state.context import Context
from recollect.store.scope import Scope
from tests.support.memory import memory_over
from tests.support.scripted_openai import ScriptedOpenAI

DANA = Context(user_id="dana", org_id="acme", extract_after_idle_s=3600)
FACTS = ("acme", "dana", "facts")
PEANUTS = NewFact(text="Allergic to peanuts", category=FactCategory.CONSTRAINT)


def _prompt_after_turn(
    checkpointer: PostgresSaver, scripted: ScriptedOpenAI, store: BaseStore, **graph: Any
) -> str:
    agent = make_graph(checkpointer=checkpointer, store=store, **graph)
    scripted.reply("Noted.")
    result = agent.invoke(user_turn("any peanut allergy?"), thread_config("t"), context=DANA)
    assert result["messages"][-1].text == "Noted."
    return json.dumps(scripted.last_messages())


def test_a_swapped_in_langgraph_store_feeds_recall(
    pool: ConnectionPool[Any], checkpointer: PostgresSaver, scripted_llm: ScriptedOpenAI
) -> None:
    store = InMemoryStore()
    store.put(FACTS, "a1", {"content": "Allergic to peanuts"})
    store.put(("acme", "bo", "facts"), "b1", {"content": "Bo is allergic to cats"})
    prompt = _prompt_after_turn(checkpointer, scripted_llm, store)
    assert "Allergic to peanuts" in prompt
    assert "cats" not in prompt


def test_our_store_feeds_recall_in_a_graph_without_the_engine(
    pool: ConnectionPool[Any], checkpointer: PostgresSaver, scripted_llm: ScriptedOpenAI
) -> None:
    memory = memory_over(pool, scripted_llm)
    memory.remember(Scope.for_user("acme", "dana"), PEANUTS)
    prompt = _prompt_after_turn(checkpointer, scripted_llm, RecollectStore(memory))
    assert "Allergic to peanuts" in prompt


def test_the_engine_stays_the_default_beside_a_store(
    pool: ConnectionPool[Any], checkpointer: PostgresSaver, scripted_llm: ScriptedOpenAI
) -> None:
    memory = memory_over(pool, scripted_llm)
    memory.remember(Scope.for_user("acme", "dana"), PEANUTS)
    store = InMemoryStore()
    store.put(FACTS, "a1", {"content": "Allergic to sesame"})
    prompt = _prompt_after_turn(checkpointer, scripted_llm, store, memory=memory)
    assert "Allergic to peanuts" in prompt
    assert "sesame" not in prompt
