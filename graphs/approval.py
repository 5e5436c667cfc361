"""The approval subgraph: draft → submit → review (human) → start_execution → execute.

Every edge after a step is the same router, and it reads `workflow_state` only — never the
request, the decision or any transcript — so what the graph does next is exactly what the
transition table (`recollect/approvals/machine.py`) allowed the last step to do. Each step is
checkpointed, so a workflow can wait at the review gate for days and across restarts, and a
crash while executing resumes into `execute`, which is idempotent.

`graph` is compiled without a checkpointer for `langgraph dev` / LangGraph Platform;
`make_graph(checkpointer=...)` serves the CLI, the agent's tool and tests.
"""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from graphs.twin import offloaded_twin
from nodes.approval.draft import draft
from nodes.approval.execute import execute
from nodes.approval.review import review
from nodes.approval.start_execution import start_execution
from nodes.approval.submit import submit
from recollect.approvals.machine import APPROVAL_TRANSITIONS, WorkflowState
from state.approval import ApprovalContext, ApprovalInput, ApprovalState
from state.context import Context

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


builder: StateGraph[ApprovalState, Context, ApprovalInput, ApprovalState] = StateGraph(
    ApprovalState, context_schema=ApprovalContext, input_schema=ApprovalInput
)
builder.add_node("draft", offloaded_twin("draft", draft))
builder.add_node("submit", offloaded_twin("submit", submit))
builder.add_node("review", offloaded_twin("review", review))
builder.add_node("start_execution", offloaded_twin("start_execution", start_execution))
builder.add_node("execute", offloaded_twin("execute", execute))
builder.add_edge(START, "draft")
builder.add_conditional_edges("draft", route, _targets({WorkflowState.DRAFT}))
for _step, _state in ACTS_IN.items():
    _leaves_to = {t.to_state for t in APPROVAL_TRANSITIONS.exits(_state)}
    if _step == "review":  # a refused answer: the gate asks again
        _leaves_to.add(_state)
    builder.add_conditional_edges(_step, route, _targets(_leaves_to))


def make_graph(
    checkpointer: BaseCheckpointSaver[Any] | None = None,
) -> CompiledStateGraph[ApprovalState, Context, ApprovalInput, ApprovalState]:
    """The approval workflow compiled with the given persistence."""
    return builder.compile(checkpointer=checkpointer, name="recollect-approval")


graph = make_graph()
