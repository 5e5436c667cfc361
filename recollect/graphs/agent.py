"""The agent graph: recall → trim → call_model around `AgentState`.

`graph` is compiled without a checkpointer or store, as LangGraph Platform and `langgraph dev`
inject their own; scripts, the CLI and tests call `make_graph` with Postgres persistence.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AnyMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore

from recollect.memory.process_memory import process_memory
from recollect.nodes.call_model import call_model
from recollect.nodes.recall import MemorySource, RecallNode
from recollect.nodes.trim import trim
from recollect.state.agent import AgentInput, AgentState
from recollect.state.context import Context

AgentBuilder = StateGraph[AgentState, Context, AgentInput, AgentState]


def build(memory: MemorySource) -> AgentBuilder:
    """The agent's nodes and edges, with recall bound to `memory` (None: no long-term memory)."""
    graph_builder: AgentBuilder = StateGraph(
        AgentState, context_schema=Context, input_schema=AgentInput
    )
    graph_builder.add_node("recall", RecallNode(memory))
    graph_builder.add_node("trim", trim)
    graph_builder.add_node("call_model", call_model)
    graph_builder.add_edge(START, "recall")
    graph_builder.add_edge("recall", "trim")
    graph_builder.add_edge("trim", "call_model")
    graph_builder.add_edge("call_model", END)
    return graph_builder


builder = build(process_memory)
"""For deployment: long-term memory opens on the first turn, on the platform's database."""


def make_graph(
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    store: BaseStore | None = None,
    memory: MemorySource = None,
) -> CompiledStateGraph[AgentState, Context, AgentInput, AgentState]:
    """The agent compiled with the given persistence and long-term memory (if any)."""
    return build(memory).compile(checkpointer=checkpointer, store=store, name="recollect-agent")


def thread_config(thread_id: str) -> RunnableConfig:
    """The config that addresses one conversation thread."""
    return {"configurable": {"thread_id": thread_id}}


def user_turn(text: str) -> AgentInput:
    """The input for one user message."""
    messages: list[AnyMessage] = [HumanMessage(content=text)]
    return {"messages": messages}


graph = builder.compile(name="recollect-agent")
