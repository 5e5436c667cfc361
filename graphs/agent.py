"""The agent graph, as the design card draws it: recall ∥ trim → call_model (⇄ tools) →
summarize (only when a fold is due) → extract.

Recall and trim run side by side in one superstep after the input check (they write disjoint
parts of the state), so one checkpoint follows both; the model's step waits for the two.
Every turn ends in `extract`, whose only work is one short transaction that queues the turn
for the background memory job. Each step has a sync form (the CLI, scripts) and an async one
(the served API) around the same plain logic (`recollect.twin`), and reads the run's
settings as the graph's own `Context` class (`recollect.with_settings`).

`graph` is compiled without a checkpointer or store, as LangGraph Platform and `langgraph dev`
inject their own; scripts, the CLI and tests call `make_graph` with Postgres persistence.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore

from graphs.tools import AGENT_TOOLS, memory_tools, tool_node
from recollect import (
    Context,
    MemorySource,
    PromptSection,
    RecallNode,
    aextract,
    asummarize,
    atrim,
    check_new_messages,
    extract,
    fold_pending,
    make_acall_model,
    make_call_model,
    process_memory,
    route_with_settings,
    summarize,
    trim,
    twin,
    with_settings,
)
from state.agent import AgentContext, AgentInput, AgentState

TURN_START = ["recall", "trim"]
"""The steps a turn starts with, side by side."""


def route_after_model(state: AgentState, runtime: Runtime[Context]) -> str:
    """Tool calls run first; then a fold, only on turns that need one; every turn ends in
    `extract`."""
    messages = state.get("messages", [])
    if messages and isinstance(messages[-1], AIMessage) and messages[-1].tool_calls:
        return "tools"
    return "summarize" if fold_pending(state, runtime) else "extract"


def route_input(state: AgentState) -> list[str]:
    """The turn's entry: new human messages beyond the size limits fail the run with one line
    before any node runs; otherwise recall and trim start the turn together."""
    check_new_messages(state)
    return TURN_START


AgentBuilder = StateGraph[AgentState, Context, AgentInput, AgentState]


def build(
    memory: MemorySource,
    tools: Sequence[BaseTool] = AGENT_TOOLS,
    *,
    state_schema: type[AgentState] = AgentState,
    input_schema: type[AgentInput] = AgentInput,
    context_schema: type[Context] = AgentContext,
    prompt_sections: Sequence[PromptSection] = (),
) -> AgentBuilder:
    """The agent's nodes and edges, with recall and the memory tools bound to `memory` (None:
    no long-term memory, and no memory tools) beside `tools` for the model to call.

    A fork's own state (an `AgentState` subclass with its fields, and an `AgentInput`
    subclass for those a caller may send), its own settings (a `Context` subclass, which every
    step, prompt section and tool then receives, its defaults filling in what a run does not
    send) and `prompt_sections` that render them into the system message keep this wiring as
    it is."""
    graph_builder: AgentBuilder = StateGraph(
        state_schema, context_schema=context_schema, input_schema=input_schema
    )
    tools = [*tools, *memory_tools(memory)]
    recall = RecallNode(memory)
    steps = {
        "recall": twin("recall", recall, recall.acall),
        "trim": twin("trim", trim, atrim),
        "call_model": twin(
            "call_model",
            make_call_model(tools, prompt_sections),
            make_acall_model(tools, prompt_sections),
        ),
        "tools": tool_node(tools),
        "summarize": twin("summarize", summarize, asummarize),
        "extract": twin("extract", extract, aextract),
    }
    for name, step in steps.items():
        graph_builder.add_node(name, with_settings(step, context_schema))
    graph_builder.add_conditional_edges(START, route_input, TURN_START)
    graph_builder.add_edge(TURN_START, "call_model")
    graph_builder.add_conditional_edges(
        "call_model",
        route_with_settings(route_after_model, context_schema),
        ["tools", "summarize", "extract"],
    )
    graph_builder.add_edge("tools", "call_model")
    graph_builder.add_edge("summarize", "extract")
    graph_builder.add_edge("extract", END)
    return graph_builder


builder = build(process_memory)
"""For deployment: long-term memory opens on the first turn, on the platform's database."""


def make_graph(
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    store: BaseStore | None = None,
    memory: MemorySource = None,
    tools: Sequence[BaseTool] = AGENT_TOOLS,
) -> CompiledStateGraph[AgentState, Context, AgentInput, AgentState]:
    """The agent compiled with the given persistence, long-term memory (if any) and tools."""
    return build(memory, tools).compile(
        checkpointer=checkpointer, store=store, name="recollect-agent"
    )


graph = builder.compile(name="recollect-agent")
