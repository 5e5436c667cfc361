"""The approval subgraph: draft → submit → review (human) → start_execution → execute.

Every edge after a step is the same router, and it reads `workflow_state` only — never the
request, the decision or any transcript — so what the graph does next is exactly what the
transition table (`recollect/approvals/machine.py`) allowed the last step to do. Each step is
checkpointed, so a workflow can wait at the review gate for days and across restarts, and a
crash while executing resumes into `execute`, which is idempotent. Each step reads the run's
settings as the graph's own `Context` class (`recollect/prebuilt/settings.py`).

`graph` is compiled without a checkpointer for `langgraph dev` / LangGraph Platform;
`make_graph(checkpointer=...)` serves the CLI, the agent's tool and tests.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from nodes.approval.draft import draft
from nodes.approval.execute import execute
from nodes.approval.review import review
from nodes.approval.start_execution import start_execution
from nodes.approval.submit import submit
from recollect import Context, offloaded_twin, with_settings
from recollect.approvals.machine import APPROVAL_TRANSITIONS, WorkflowState
from state.approval import ApprovalContext, ApprovalInput, ApprovalState

NEXT_STEP: dict[WorkflowState, str] = {
    WorkflowState.DRAFT: "submit",
    WorkflowState.SUBMITTED_FOR_REVIEW: "review",
    WorkflowState.APPROVED: "start_execution",
    WorkflowState.EXECUTING: "execute",
    WorkflowState.REJECTED: END,
    WorkflowState.COMPLETED: END,
    WorkflowState.FAILED: END,
}
"""Which step acts in each state; terminal states end the run."""


STEPS: dict[str, Callable[..., dict[str, Any]]] = {
    "draft": draft,
    "submit": submit,
    "review": review,
    "start_execution": start_execution,
    "execute": execute,
}
"""The workflow's steps by node name; each runs on the engine's bounded executor."""


ACTS_IN: dict[str, WorkflowState] = {
    "submit": WorkflowState.DRAFT,
    "review": WorkflowState.SUBMITTED_FOR_REVIEW,
    "start_execution": WorkflowState.APPROVED,
    "execute": WorkflowState.EXECUTING,
}
"""The state each step moves the workflow out of (`draft` creates it)."""


def route(state: ApprovalState) -> str:
    """The next step for the current `workflow_state`."""
    return NEXT_STEP[WorkflowState(state["workflow_state"])]


def _targets(states: set[WorkflowState]) -> list[str]:
    """Where `route` can go from these states (drawn as the graph's edges in Studio)."""
    return sorted({NEXT_STEP[s] for s in states})


ApprovalBuilder = StateGraph[ApprovalState, Context, ApprovalInput, ApprovalState]


def build(context_schema: type[Context] = ApprovalContext) -> ApprovalBuilder:
    """The workflow's steps and edges; every step reads the run's settings as `context_schema`
    (a fork's `Context` subclass, its defaults filling in what a run does not send)."""
    graph_builder: ApprovalBuilder = StateGraph(
        ApprovalState, context_schema=context_schema, input_schema=ApprovalInput
    )
    for name, step in STEPS.items():
        graph_builder.add_node(name, with_settings(offloaded_twin(name, step), context_schema))
    graph_builder.add_edge(START, "draft")
    graph_builder.add_conditional_edges("draft", route, _targets({WorkflowState.DRAFT}))
    for step_name, acts_in in ACTS_IN.items():
        leaves_to = {t.to_state for t in APPROVAL_TRANSITIONS.exits(acts_in)}
        if step_name == "review":  # a refused answer: the gate asks again
            leaves_to.add(acts_in)
        graph_builder.add_conditional_edges(step_name, route, _targets(leaves_to))
    return graph_builder


builder = build()


def make_graph(
    checkpointer: BaseCheckpointSaver[Any] | None = None,
) -> CompiledStateGraph[ApprovalState, Context, ApprovalInput, ApprovalState]:
    """The approval workflow compiled with the given persistence."""
    return builder.compile(checkpointer=checkpointer, name="recollect-approval")


graph = make_graph()
