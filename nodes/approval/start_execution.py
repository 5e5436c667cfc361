"""Enter `executing` in its own step, so the checkpoint says so before the effect starts."""

from __future__ import annotations

from typing import Any

from nodes.approval.common import fire, owner_scope, stored_approval
from recollect.approvals.machine import Decision, GuardContext
from recollect.approvals.store import record_transition
from recollect.engine import clock, shared_pool
from state.approval import ApprovalState


def start_execution(state: ApprovalState) -> dict[str, Any]:
    """approved → executing, if the workflow's record holds the approval; a crash from here
    on resumes into `execute`."""
    stored_approval(state)
    transition, entry = fire(
        state,
        GuardContext(request_valid=True, decision=Decision.APPROVE, outcome=None),
        actor="system",
        at=clock.now(),
        note=None,
    )
    record_transition(shared_pool(), owner_scope(state), state["workflow_id"], entry)
    return {"workflow_state": transition.to_state.value, "audit": [entry]}
