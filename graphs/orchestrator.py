"""The orchestrator graph: plan → one worker per subtask (concurrently, via `Send`) →
synthesise → remember.

Each worker runs in its own message list and returns only a distilled, structured result; the
orchestrator's checkpointed state holds the plan, the blackboard, each worker's private notes
and those results — never a worker's prompt, tool calls or observations. Every step reads the
run's settings as the graph's own `Context` class (`recollect.with_settings`). `graph` is
compiled without a checkpointer or store for `langgraph dev` and the platform; `make_graph` serves
scripts, the CLI and tests.
"""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Send

from nodes.orchestrator.plan import plan
from nodes.orchestrator.remember import aremember, remember
from nodes.orchestrator.synthesise import synthesise
from nodes.orchestrator.worker import WorkerNode
from recollect import Context, MemorySource, process_memory, twin, with_settings
from state.orchestrator import (
    OrchestratorContext,
    OrchestratorInput,
    OrchestratorOutput,
    OrchestratorState,
    WorkerInput,
)


def fan_out(state: OrchestratorState) -> list[Send]:
    """One `Send` per subtask, each carrying only what that worker may see: its blackboard
    keys and its own notes (never another worker's)."""
    board = state.get("blackboard") or {}
    notes = state.get("notes") or {}
    return [
        Send(
            "worker",
            WorkerInput(
                round=state.get("round", 0),
                subtask=subtask,
                blackboard={key: board[key] for key in subtask["keys"] if key in board},
                notes=dict(notes.get(subtask["id"], {})),
            ),
        )
        for subtask in state.get("subtasks", [])
    ]


OrchestratorBuilder = StateGraph[OrchestratorState, Context, OrchestratorInput, OrchestratorOutput]


def build(
    memory: MemorySource, context_schema: type[Context] = OrchestratorContext
) -> OrchestratorBuilder:
    """The orchestrator's nodes and edges, with workers' recall bound to `memory`; every step
    reads the run's settings as `context_schema` (a fork's `Context` subclass, its defaults
    filling in what a run does not send)."""
    graph_builder: OrchestratorBuilder = StateGraph(
        OrchestratorState,
        context_schema=context_schema,
        input_schema=OrchestratorInput,
        output_schema=OrchestratorOutput,
    )
    graph_builder.add_node("plan", with_settings(plan, context_schema))
    graph_builder.add_node(
        "worker",
        with_settings(WorkerNode(memory), context_schema, "worker"),
        input_schema=WorkerInput,
    )
    graph_builder.add_node("synthesise", with_settings(synthesise, context_schema))
    graph_builder.add_node(
        "remember", with_settings(twin("remember", remember, aremember), context_schema)
    )
    graph_builder.add_edge(START, "plan")
    graph_builder.add_conditional_edges("plan", fan_out, ["worker"])
    graph_builder.add_edge("worker", "synthesise")
    graph_builder.add_edge("synthesise", "remember")
    graph_builder.add_edge("remember", END)
    return graph_builder


builder = build(process_memory)
"""For deployment: long-term memory opens on first use, on the platform's database."""


def make_graph(
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    memory: MemorySource = None,
) -> CompiledStateGraph[OrchestratorState, Context, OrchestratorInput, OrchestratorOutput]:
    """The orchestrator compiled with the given persistence and long-term memory (if any)."""
    return build(memory).compile(checkpointer=checkpointer, name="recollect-orchestrator")


graph = builder.compile(name="recollect-orchestrator")
