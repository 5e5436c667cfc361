"""The background memory graph: `{"thread_id": ...}` → that thread's queued turns extracted.

The same work `recollect worker` does, exposed as a graph so LangGraph Platform (or
`langgraph dev`) can schedule it per conversation with
`client.runs.create(memory_thread, "memory", input={"thread_id": t}, after_seconds=N,
multitask_strategy="rollback")`.
"""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from nodes.memory_job import run_memory_job
from recollect import Context, with_settings
from state.memory import MemoryContext, MemoryRunInput, MemoryRunState

MemoryBuilder = StateGraph[MemoryRunState, Context, MemoryRunInput, MemoryRunState]


def build(context_schema: type[Context] = MemoryContext) -> MemoryBuilder:
    """The one step, reading the run's settings as `context_schema` whatever a run sends."""
    graph_builder: MemoryBuilder = StateGraph(
        MemoryRunState, context_schema=context_schema, input_schema=MemoryRunInput
    )
    graph_builder.add_node("run_memory_job", with_settings(run_memory_job, context_schema))
    graph_builder.add_edge(START, "run_memory_job")
    graph_builder.add_edge("run_memory_job", END)
    return graph_builder


builder = build()


def make_graph(
    checkpointer: BaseCheckpointSaver[Any] | None = None,
) -> CompiledStateGraph[MemoryRunState, Context, MemoryRunInput, MemoryRunState]:
    """The memory graph compiled with the given persistence."""
    return builder.compile(checkpointer=checkpointer, name="recollect-memory")


graph = make_graph()
