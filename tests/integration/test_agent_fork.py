"""A fork's own state field and setting reach the prompt through `graphs.agent.build`, with the
template's wiring unchanged: its `AgentState` and `Context` subclasses and a prompt section;
and every step and tool reads the settings as the fork's `Context` subclass, whatever a run
sends."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.prebuilt import ToolRuntime
from psycopg_pool import ConnectionPool

import recollect.prebuilt.call_model
import recollect.prebuilt.extract
import recollect.prebuilt.recall
import recollect.prebuilt.summarize
import recollect.prebuilt.trim
from graphs.agent import build
from recollect import thread_config
from recollect.prebuilt.prompt import PromptSection
from recollect.state.context import Context
from state.agent import AgentContext, AgentInput, AgentState
from tests.support.memory import memory_over
from tests.support.scripted_openai import Reply, ScriptedOpenAI, ToolCall


class TripState(AgentState, total=False):
    destination: str


class TripInput(AgentInput, total=False):
    destination: str


@dataclass(kw_only=True)
class TripContext(AgentContext):
    home_airport: str = "LHR"
    """Where every trip starts."""


def trip(state: Any, ctx: Context) -> str:
    if not isinstance(ctx, TripContext):
        return f"settings arrived as {type(ctx).__name__}"
    return f"Destination: {state.get('destination', 'undecided')}; from {ctx.home_airport}"


def test_a_forks_state_field_and_setting_reach_the_prompt(
    pool: ConnectionPool[Any], checkpointer: PostgresSaver, scripted_llm: ScriptedOpenAI
) -> None:
    agent = build(
        None,
        tools=[],
        state_schema=TripState,
        input_schema=TripInput,
        context_schema=TripContext,
        prompt_sections=[PromptSection("Trip", trip)],
    ).compile(checkpointer=checkpointer)
    config = thread_config("trip-1")
    turn: TripInput = {"messages": [HumanMessage("Plan my week away")], "destination": "Lisbon"}

    agent.invoke(turn, config, context=TripContext(home_airport="OPO"))
    agent.invoke({"messages": [HumanMessage("And the hotel?")]}, config, context={})
    agent.invoke({"messages": [HumanMessage("And the flight?")]}, config)  # no context at all

    first, second, third = (r["messages"][0]["content"] for r in scripted_llm.chat_requests[-3:])
    assert "## Trip\nDestination: Lisbon; from OPO" in first
    assert "## Trip\nDestination: Lisbon; from LHR" in second  # kept in state; the default
    assert "## Trip\nDestination: Lisbon; from LHR" in third
    assert agent.get_state(config).values["destination"] == "Lisbon"
    assert agent.get_state(config).values["context_tokens"]["own_sections"] > 0


def test_without_sections_the_prompt_has_no_section_of_a_fork(
    pool: ConnectionPool[Any], checkpointer: PostgresSaver, scripted_llm: ScriptedOpenAI
) -> None:
    agent = build(None, tools=[], state_schema=TripState, input_schema=TripInput).compile(
        checkpointer=checkpointer
    )
    agent.invoke(
        {"messages": [HumanMessage("hi")], "destination": "Lisbon"}, thread_config("trip-2")
    )
    assert "## Trip" not in scripted_llm.chat_requests[-1]["messages"][0]["content"]


@tool
def trip_origin(runtime: ToolRuntime[Context]) -> str:
    """Where the user's trips start."""
    ctx = runtime.context
    return f"{type(ctx).__name__} from {getattr(ctx, 'home_airport', 'nowhere')}"


SETTINGS_READERS = (
    recollect.prebuilt.recall,
    recollect.prebuilt.trim,
    recollect.prebuilt.call_model,
    recollect.prebuilt.summarize,
    recollect.prebuilt.extract,
)
"""The steps that read the run's settings, each through its own `context_of`."""
BURST = [
    "I fly often and keep notes on every trip " + "and every airport lounge " * 20,
    "Where do my trips start?",
]
"""A first message the 150-token history drops (and folds), then the question."""


@contextmanager
def settings_seen() -> Iterator[list[tuple[str, Context]]]:
    """The settings each step read, in order, around the real `context_of`."""
    seen: list[tuple[str, Context]] = []
    with pytest.MonkeyPatch.context() as patch:
        for module in SETTINGS_READERS:

            def recorded(runtime: Any, name: str = module.__name__, real: Any = module.context_of):
                ctx: Context = real(runtime)
                seen.append((name, ctx))
                return ctx

            patch.setattr(module, "context_of", recorded)
        yield seen


@pytest.mark.parametrize(
    "sent",
    [
        None,
        {"max_history_tokens": 150},
        Context(max_history_tokens=150),
        TripContext(home_airport="OPO", max_history_tokens=150),
    ],
    ids=["nothing", "a dict", "the template's Context", "the fork's"],
)
def test_every_step_and_tool_reads_the_forks_settings(
    sent: Context | dict[str, Any] | None,
    pool: ConnectionPool[Any],
    scripted_llm: ScriptedOpenAI,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RECOLLECT_MAX_HISTORY_TOKENS", "150")  # for a run that sends nothing
    agent = build(
        memory_over(pool, scripted_llm), tools=[trip_origin], context_schema=TripContext
    ).compile()
    scripted_llm.enqueue(Reply(tool_calls=(ToolCall("trip_origin"),)))
    with settings_seen() as seen:
        out = agent.invoke(
            {"messages": [HumanMessage(text) for text in BURST]},
            thread_config(f"trip-settings-{type(sent).__name__}"),
            context=sent,
        )
    assert {name for name, _ in seen} == {module.__name__ for module in SETTINGS_READERS}
    assert {(n, type(ctx)) for n, ctx in seen} == {(n, TripContext) for n, _ in seen}
    airport = sent.home_airport if isinstance(sent, TripContext) else "LHR"
    assert {(ctx.home_airport, ctx.max_history_tokens) for _, ctx in seen} == {(airport, 150)}
    [answer] = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert answer.text == f"TripContext from {airport}"
