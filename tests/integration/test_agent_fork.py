"""A fork's own state field and setting reach the prompt through `graphs.agent.build`, with the
template's wiring unchanged: its `AgentState` and `Context` subclasses and a prompt section."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg_pool import ConnectionPool

from graphs.agent import build, thread_config
from nodes.prompt import PromptSection
from state.agent import AgentContext, AgentInput, AgentState
from state.context import Context
from tests.support.scripted_openai import ScriptedOpenAI


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
