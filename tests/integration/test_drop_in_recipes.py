"""Each recipe in `docs/drop-in.md`, run as written for ten turns through the real OpenAI
client against Postgres: the checkpoint is trimmed (and what left it folded), a pinned value
survives the trim, a stored fact is recalled into the model's prompt, and each turn is queued
for extraction."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg_pool import ConnectionPool

from recollect.history.summary import FOLD_INSTRUCTIONS
from recollect.longterm.records import FactCategory, NewFact
from recollect.state.context import Context
from tests.support.db import DEFAULT_SCOPE
from tests.support.memory import memory_over
from tests.support.scripted_openai import ScriptedOpenAI
from tests.support.served_saver import served_saver

DOC = Path(__file__).resolve().parents[2] / "docs" / "drop-in.md"
MAX_LINES = 20
TURNS = 10
ORDER = "ORD-48213"
FACT = "Our team deploys to production on Fridays"
SMALL_WINDOW = Context(max_history_tokens=120)
"""The default user (`DEFAULT_SCOPE`, whom the test checkpointer reads as) and a small window."""


def recipes() -> dict[str, str]:
    """Each `##` section's Python block that defines `make_agent`, by its heading."""
    found = {}
    for section in re.split(r"^## ", DOC.read_text(), flags=re.M)[1:]:
        heading, _, body = section.partition("\n")
        block = re.search(r"```python\n(.*?)```", body, re.S)
        if block and "def make_agent(" in block.group(1):
            found[heading.strip()] = block.group(1)
    return found


RECIPES = recipes()


def code_lines(source: str) -> int:
    return sum(1 for line in source.splitlines() if line.strip())


def test_there_are_three_recipes_each_short() -> None:
    assert len(RECIPES) == 3, list(RECIPES)
    for heading, source in RECIPES.items():
        assert code_lines(source) <= MAX_LINES, f"{heading}: {code_lines(source)} lines"


def _turn_text(turn: int) -> str:
    if turn == 0:
        return f"Hi, my order number is {ORDER}. " + "Some background words. " * 8
    if turn == TURNS - 1:
        return "When does my team deploy to production?"
    return f"turn {turn}: " + "more words about the weather " * 6


def _reply_requests(server: ScriptedOpenAI) -> list[dict[str, Any]]:
    """The model calls that answered the user (summary folds are model calls too)."""
    return [
        r
        for r in server.chat_requests
        if not str(r["messages"][0]["content"]).startswith(FOLD_INSTRUCTIONS[:40])
    ]


def _sync_turns(make_agent: Any, memory: Any, checkpointer: Any, config: Any) -> dict[str, Any]:
    agent = make_agent(memory=memory, checkpointer=checkpointer)
    for turn in range(TURNS):
        agent.invoke({"messages": [HumanMessage(_turn_text(turn))]}, config, context=SMALL_WINDOW)
    return dict(agent.get_state(config).values)


async def _async_turns(make_agent: Any, memory: Any, database_uri: str, config: Any) -> Any:
    """As the served API runs a graph: `ainvoke` on an event loop, the async saver, and so
    every hook's async form."""
    async with served_saver(database_uri, DEFAULT_SCOPE) as saver:
        agent = make_agent(memory=memory, checkpointer=saver)
        for turn in range(TURNS):
            turn_input = {"messages": [HumanMessage(_turn_text(turn))]}
            await agent.ainvoke(turn_input, config, context=SMALL_WINDOW)
        return dict((await agent.aget_state(config)).values)


@pytest.mark.parametrize("call", ["invoke", "ainvoke"])
@pytest.mark.parametrize("heading", sorted(RECIPES))
def test_a_recipe_trims_keeps_pins_and_recalls_for_ten_turns(
    heading: str,
    call: str,
    pool: ConnectionPool[Any],
    checkpointer: PostgresSaver,
    database_uri: str,
    scripted_llm: ScriptedOpenAI,
) -> None:
    memory = memory_over(pool, scripted_llm)
    memory.remember(DEFAULT_SCOPE, NewFact(text=FACT, category=FactCategory.EVENT))
    namespace: dict[str, Any] = {}
    exec(compile(RECIPES[heading], f"{DOC.name}: {heading}", "exec"), namespace)
    config = {"configurable": {"thread_id": f"recipe-{heading[:20]}-{call}"}}
    if call == "invoke":
        state = _sync_turns(namespace["make_agent"], memory, checkpointer, config)
    else:
        state = asyncio.run(_async_turns(namespace["make_agent"], memory, database_uri, config))

    kept = [m.text for m in state["messages"]]
    assert len(kept) < 2 * TURNS, kept
    assert not any(ORDER in text for text in kept), "the first turn should have left the window"
    assert ORDER in [pin["value"] for pin in state["pinned"].values()]
    last_prompt = _reply_requests(scripted_llm)[-1]["messages"]
    system = str(last_prompt[0]["content"])
    assert last_prompt[0]["role"] == "system"
    assert ORDER in system
    assert FACT in [item["text"] for item in state["recalled"]]
    # recalled memories follow the user message they came with (an earlier one's stay put)
    assert any(FACT in str(m["content"]) for m in last_prompt[1:])
    assert _turn_text(TURNS - 1) in [m["content"] for m in last_prompt[-2:]]
    assert state["summary"]["folded_messages"] > 0
    assert state["queued_through"] == state["messages"][-1].id, "the turn was not queued"
