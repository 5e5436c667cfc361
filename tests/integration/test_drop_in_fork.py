"""A fork's own state field and setting reach the model's prompt through `MemoryMiddleware`
(`create_agent`), `MemoryHooks` (`create_react_agent`) and the memory's steps in a `StateGraph`
of its own (`MemoryState` mixed in, each step under `with_settings`), given the fork's `Context`
subclass: its defaults fill in whether a run sends nothing, a dict or the template's
`Context`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from langchain.agents import AgentState, create_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolRuntime, create_react_agent
from psycopg_pool import ConnectionPool

from recollect.models.factory import chat_model
from recollect.prebuilt.call_model import make_call_model
from recollect.prebuilt.extract import extract
from recollect.prebuilt.hooks import MemoryHooks, ReactMemoryState
from recollect.prebuilt.middleware import MemoryMiddleware
from recollect.prebuilt.prepare import PrepareNode
from recollect.prebuilt.prompt import PromptSection
from recollect.prebuilt.settings import with_settings
from recollect.state.context import Context
from recollect.state.memory_state import MemoryState
from tests.support.scripted_openai import Reply, ScriptedOpenAI, ToolCall


@dataclass(kw_only=True)
class TripContext(Context):
    home_airport: str = "LHR"
    """Where every trip starts."""


class TripAgentState(AgentState[Any], total=False):
    destination: str


class TripReactState(ReactMemoryState, total=False):
    destination: str


class TripGraphState(MessagesState, MemoryState, total=False):
    destination: str


def trip(state: Any, ctx: Context) -> str:
    if not isinstance(ctx, TripContext):
        return f"settings arrived as {type(ctx).__name__}"
    return f"Destination: {state.get('destination', 'undecided')}; from {ctx.home_airport}"


SECTIONS = [PromptSection("Trip", trip)]


def middleware_agent(checkpointer: PostgresSaver) -> Any:
    return create_agent(
        chat_model(),
        tools=[],
        middleware=[MemoryMiddleware(None, SECTIONS, context_schema=TripContext)],
        state_schema=TripAgentState,
        context_schema=TripContext,
        checkpointer=checkpointer,
    )


def hooks_agent(checkpointer: PostgresSaver) -> Any:
    hooks = MemoryHooks(None, SECTIONS, context_schema=TripContext)
    return create_react_agent(
        chat_model(),
        tools=[],
        pre_model_hook=hooks.pre_model_hook,
        post_model_hook=hooks.post_model_hook,
        state_schema=TripReactState,
        context_schema=TripContext,
        checkpointer=checkpointer,
    )


def state_graph_agent(checkpointer: PostgresSaver) -> Any:
    steps = [
        ("prepare", PrepareNode(None)),
        ("call_model", make_call_model((), SECTIONS)),
        ("extract", extract),
    ]
    builder = StateGraph(TripGraphState, context_schema=TripContext).add_sequence(
        [(name, with_settings(step, TripContext, name)) for name, step in steps]
    )
    return builder.add_edge(START, "prepare").compile(checkpointer=checkpointer)


@pytest.mark.parametrize("make_agent", [middleware_agent, hooks_agent, state_graph_agent])
@pytest.mark.parametrize(
    ("sent", "airport"),
    [
        (None, "LHR"),
        ({}, "LHR"),
        (Context(), "LHR"),
        (TripContext(home_airport="OPO"), "OPO"),
    ],
    ids=["nothing", "a dict", "the template's Context", "the fork's"],
)
def test_a_forks_state_field_and_setting_reach_the_prompt(
    make_agent: Any,
    sent: Context | dict[str, Any] | None,
    airport: str,
    pool: ConnectionPool[Any],
    checkpointer: PostgresSaver,
    scripted_llm: ScriptedOpenAI,
) -> None:
    agent = make_agent(checkpointer)
    config = {"configurable": {"thread_id": f"{make_agent.__name__}-{type(sent).__name__}"}}
    turn = {"messages": [HumanMessage("Plan my week away")], "destination": "Lisbon"}
    agent.invoke(turn, config, context=sent)
    agent.invoke({"messages": [HumanMessage("And the hotel?")]}, config, context=sent)

    for request in scripted_llm.chat_requests[-2:]:
        system = str(request["messages"][0]["content"])
        assert f"## Trip\nDestination: Lisbon; from {airport}" in system, system
    assert agent.get_state(config).values["context_tokens"]["own_sections"] > 0


@tool
def trip_origin(runtime: ToolRuntime[Context]) -> str:
    """Where the user's trips start."""
    ctx = runtime.context
    return f"{type(ctx).__name__} from {getattr(ctx, 'home_airport', 'nowhere')}"


def test_a_tool_reads_the_forks_settings_beside_the_middleware(
    pool: ConnectionPool[Any], checkpointer: PostgresSaver, scripted_llm: ScriptedOpenAI
) -> None:
    agent = create_agent(
        chat_model(),
        tools=[trip_origin],
        middleware=[MemoryMiddleware(None, context_schema=TripContext)],
        context_schema=TripContext,
        checkpointer=checkpointer,
    )
    scripted_llm.enqueue(Reply(tool_calls=(ToolCall("trip_origin"),)))
    config = {"configurable": {"thread_id": "middleware-tool"}}
    out = agent.invoke({"messages": [HumanMessage("Where do my trips start?")]}, config)
    [answer] = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert answer.text == "TripContext from LHR"
