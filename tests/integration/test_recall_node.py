"""The recall node in the agent graph: recalled facts reach the model, with dates."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from langgraph.checkpoint.postgres import PostgresSaver
from psycopg_pool import ConnectionPool

from graphs.agent import make_graph
from recollect import thread_config, user_turn
from recollect.longterm.facts import LongTermMemory
from recollect.longterm.records import NewFact, ProfileEntry
from recollect.state.context import Context
from recollect.store.scope import Scope
from tests.support.memory import memory_over
from tests.support.scripted_openai import ScriptedOpenAI

DANA = Context(user_id="dana", org_id="acme")
SCOPE = Scope.for_user("acme", "dana")


def seed(memory: LongTermMemory) -> None:
    memory.set_profile(SCOPE, [ProfileEntry(key="name", value="Dana")])
    memory.remember(SCOPE, NewFact(
        text="Frontend is React 16", category="technical_stack", subject="frontend_framework",
        learned_at=datetime(2025, 1, 10, tzinfo=UTC),
    ))  # fmt: skip
    memory.remember(SCOPE, NewFact(
        text="Frontend moved to React 19", category="technical_stack",
        subject="frontend_framework", learned_at=datetime.now(UTC) - timedelta(days=1),
    ))  # fmt: skip
    eve = Scope.for_user("acme", "eve")
    memory.remember(eve, NewFact(text="Frontend is Vue", category="technical_stack"))


def test_recalled_memory_reaches_the_model_with_dates(
    pool: ConnectionPool[Any], checkpointer: PostgresSaver, scripted_llm: ScriptedOpenAI
) -> None:
    memory = memory_over(pool, scripted_llm)
    seed(memory)
    agent = make_graph(checkpointer=checkpointer, memory=memory)
    scripted_llm.reply("You are on React 19.")
    result = agent.invoke(
        user_turn("which frontend framework are we on?"), thread_config("t1"), context=DANA
    )
    kinds = [item["kind"] for item in result["recalled"]]
    assert kinds[0] == "profile"
    texts = [item["text"] for item in result["recalled"]]
    assert "Frontend moved to React 19" in texts
    assert not any("React 16" in t or "Vue" in t for t in texts)
    system, *_, newest, recalled = (m["content"] for m in scripted_llm.last_messages())
    yesterday = (datetime.now(UTC) - timedelta(days=1)).date().isoformat()
    assert '<memory>\n## User profile\n- name: "Dana"' in system
    assert newest == "which frontend framework are we on?"
    assert f'- ({yesterday}) "Frontend moved to React 19"' in recalled
    assert "React 16" not in system + recalled
    assert result["context_tokens"]["recalled"] > 0
    assert result["context_tokens"]["profile"] > 0


def test_each_turn_replaces_the_last_turns_recall(
    pool: ConnectionPool[Any], checkpointer: PostgresSaver, scripted_llm: ScriptedOpenAI
) -> None:
    memory = memory_over(pool, None)
    seed(memory)
    agent = make_graph(checkpointer=checkpointer, memory=memory)
    config = thread_config("t2")
    first = agent.invoke(user_turn("frontend?"), config, context=DANA)
    assert any("React 19" in item["text"] for item in first["recalled"])
    second = agent.invoke(user_turn("zebra crossing"), config, context=DANA)
    assert [item["kind"] for item in second["recalled"]] == ["profile"]


def test_without_long_term_memory_the_graph_still_answers(
    checkpointer: PostgresSaver, scripted_llm: ScriptedOpenAI
) -> None:
    agent = make_graph(checkpointer=checkpointer)
    scripted_llm.reply("hello")
    result = agent.invoke(user_turn("hi"), thread_config("t3"), context=DANA)
    assert result["recalled"] == []
    assert result["messages"][-1].text == "hello"


def test_a_memory_outage_costs_context_not_the_reply(
    checkpointer: PostgresSaver, scripted_llm: ScriptedOpenAI
) -> None:
    from recollect.store.errors import DatabaseUnavailableError

    def unreachable() -> LongTermMemory:
        raise DatabaseUnavailableError("postgresql://nowhere", "refused", "Check DATABASE_URI.")

    agent = make_graph(checkpointer=checkpointer, memory=unreachable)
    scripted_llm.reply("still here")
    result = agent.invoke(user_turn("hi"), thread_config("t4"), context=DANA)
    assert result["recalled"] == []
    assert result["messages"][-1].text == "still here"
