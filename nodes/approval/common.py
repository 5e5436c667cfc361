"""What every approval step shares: the owner's scope, the workflow id, and applying a transition.

A step never picks its next state itself: it describes what it knows as a `GuardContext` and
the transition table decides, so the table stays the single statement of the machine.
"""

from __future__ import annotations

from datetime import datetime

from langchain_core.runnables import RunnableConfig

from recollect.approvals.authority import execution_refusal
from recollect.approvals.errors import ExecutionRefusedError
from recollect.approvals.machine import (
    APPROVAL_TRANSITIONS,
    GuardContext,
    Transition,
    WorkflowState,
)
from recollect.approvals.records import AuditEntry, WorkflowRecord
from recollect.approvals.store import find_workflow, record_refusal
from recollect.engine import Scope, clock, shared_pool
from state.approval import ApprovalState

THREAD_PREFIX = "approval-"


def workflow_id_for(thread_id: str) -> str:
    """A workflow's id is its thread id without the `approval-` prefix."""
    return thread_id.removeprefix(THREAD_PREFIX)


def thread_id_for(workflow_id: str) -> str:
    """The thread a workflow runs under."""
    return f"{THREAD_PREFIX}{workflow_id}"


def thread_of(config: RunnableConfig) -> str:
    """The running thread's id (a workflow only runs on a checkpointed thread)."""
    thread = (config.get("configurable") or {}).get("thread_id")
    if not thread:
        raise ValueError("the approval workflow needs a thread_id: it waits for days")
    return str(thread)


def current_state(state: ApprovalState) -> WorkflowState:
    """The state the machine is in."""
    return WorkflowState(state["workflow_state"])


def owner_scope(state: ApprovalState) -> Scope:
    """The requester's tenant scope: every row of this workflow is written under it."""
    owner = state["owner"]
    return Scope.for_user(owner["org_id"], owner["user_id"])


def fire(
    state: ApprovalState, ctx: GuardContext, *, actor: str, at: datetime, note: str | None = None
) -> tuple[Transition, AuditEntry]:
    """The one transition the table allows now, and its audit entry; a step that calls this
    has established that its move is due, so no transition firing is a bug, not a wait."""
    current = current_state(state)
    transition = APPROVAL_TRANSITIONS.next_state(current, ctx)
    if transition is None:
        raise RuntimeError(f"no transition fires from {current.value!r} for {ctx}")
    entry = AuditEntry(
        transition=transition.name,
        from_state=current.value,
        to_state=transition.to_state.value,
        actor=actor,
        at=at.isoformat(),
        note=note,
    )
    return transition, entry


def stored_approval(state: ApprovalState) -> WorkflowRecord:
    """The workflow's record, re-read, when it holds another person's approval; otherwise the
    refusal is added to the audit trail and `ExecutionRefusedError` stops the run."""
    workflow_id = state["workflow_id"]
    record = find_workflow(shared_pool(), owner_scope(state), workflow_id)
    claimed = current_state(state)
    reason = execution_refusal(workflow_id, record, claimed)
    if reason is None:
        assert record is not None
        return record
    entry = AuditEntry(
        transition="refused",
        from_state=claimed.value,
        to_state=record.state.value if record else claimed.value,
        actor="system",
        at=clock.now().isoformat(),
        note=reason,
    )
    if record is not None:
        record_refusal(shared_pool(), owner_scope(state), workflow_id, entry)
    raise ExecutionRefusedError(reason)
