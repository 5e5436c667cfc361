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
from state.context import Context
from state.memory import MemoryContext, MemoryRunInput, MemoryRunState

builder: StateGraph[MemoryRunState, Context, MemoryRunInput, MemoryRunState] = StateGraph(
    MemoryRunState, context_schema=MemoryContext, input_schema=MemoryRunInput
)
builder.add_node("run_memory_job", run_memory_job)
builder.add_edge(START, "run_memory_job")
builder.add_edge("run_memory_job", END)


def make_graph(
    checkpointer: BaseCheckpointSaver[Any] | None = None,
) -> CompiledStateGraph[MemoryRunState, Context, MemoryRunInput, MemoryRunState]:
    """The memory graph compiled with the given persistence."""
    return builder.compile(checkpointer=checkpointer, name="recollect-memory")


graph = make_graph()
