"""The agent graph: prepare (recall ∥ trim) → call_model (⇄ tools) → summarize → extract, when
a fold is due; otherwise prepare → call_model (⇄ tools), whose last model step queues the turn.

Recall and trim touch disjoint parts of the state, so they run as one step, `prepare`: one
checkpoint and one batch of writes fewer per turn than two steps or two parallel tasks, and
trim's work overlaps recall's database round trip. For the same reason a plain turn has no
`extract` step: its one transaction runs in the model's step (`nodes.reply`), so the turn is
two steps and four checkpoints.

`graph` is compiled without a checkpointer or store, as LangGraph Platform and `langgraph dev`
inject their own; scripts, the CLI and tests call `make_graph` with Postgres persistence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore

from graphs.tools import AGENT_TOOLS, memory_tools, tool_node
from graphs.twin import twin
from nodes.check_input import check_new_messages
from nodes.extract import aextract, extract
from nodes.prepare import PrepareNode
from nodes.prompt import PromptSection
from nodes.recall import MemorySource, RecallNode
from nodes.reply import ends_turn, make_areply, make_reply
from nodes.summarize import summarize
from recollect.longterm.process import process_memory
from state.agent import AgentContext, AgentInput, AgentState
from state.context import Context


def route_after_model(state: AgentState, runtime: Runtime[Context]) -> str:
    """Tool calls run first; a fold happens only on turns that need it, then the `extract`
    step queues the turn; a plain turn ends here, the model's step having queued it (the
    others save a step and its checkpoint)."""
    if ends_turn(state, runtime):
        return END
    messages = state.get("messages", [])
    if messages and isinstance(messages[-1], AIMessage) and messages[-1].tool_calls:
        return "tools"
    return "summarize"


def route_input(state: AgentState) -> str:
    """The turn's entry: new human messages beyond the size limits fail the run with one line
    before any node runs; otherwise the turn starts with `prepare`."""
    check_new_messages(state)
    return "prepare"


def as_settings(section: PromptSection, context_schema: type[Context]) -> PromptSection:
    """`section`, always handed the run's settings as `context_schema`: a run that sends no
    context reaches the steps as a plain `Context` of environment defaults."""

    def render(state: Any, ctx: Context) -> str:
        if not isinstance(ctx, context_schema):
            ctx = context_schema(**{f.name: getattr(ctx, f.name) for f in fields(ctx)})
        return section.render(state, ctx)

    return PromptSection(section.heading, render)


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
    step then receives) and `prompt_sections` that render them into the system message keep
    this wiring as it is."""
    graph_builder: AgentBuilder = StateGraph(
        state_schema, context_schema=context_schema, input_schema=input_schema
    )
    tools = [*tools, *memory_tools(memory)]
    prepare = PrepareNode(RecallNode(memory))
    graph_builder.add_node("prepare", twin("prepare", prepare, prepare.acall))
    sections = [as_settings(section, context_schema) for section in prompt_sections]
    replies = make_reply(tools, sections), make_areply(tools, sections)
    graph_builder.add_node("call_model", twin("call_model", *replies))
    graph_builder.add_node("tools", tool_node(tools))
    graph_builder.add_node("summarize", summarize)
    graph_builder.add_node("extract", twin("extract", extract, aextract))
    graph_builder.add_conditional_edges(START, route_input, ["prepare"])
    graph_builder.add_edge("prepare", "call_model")
    graph_builder.add_conditional_edges(
        "call_model", route_after_model, ["tools", "summarize", END]
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


def thread_config(thread_id: str) -> RunnableConfig:
    """The config that addresses one conversation thread."""
    return {"configurable": {"thread_id": thread_id}}


def user_turn(text: str) -> AgentInput:
    """The input for one user message."""
    messages: list[AnyMessage] = [HumanMessage(content=text)]
    return {"messages": messages}


graph = builder.compile(name="recollect-agent")
