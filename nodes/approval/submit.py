"""Submit the draft for review (the table's `submit` fires once the request is valid)."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from nodes.approval.common import fire, owner_scope
from recollect.approvals.machine import GuardContext
from recollect.approvals.records import RefundRequest
from recollect.approvals.store import record_transition
from recollect.engine import clock, shared_pool
from state.approval import ApprovalState


def submit(state: ApprovalState) -> dict[str, Any]:
    """Move to `submitted_for_review`; the next step waits for a human."""
    try:
        RefundRequest.model_validate(state["request"])
        valid = True
    except ValidationError:
        valid = False
    transition, entry = fire(
        state,
        GuardContext(request_valid=valid),
        actor=state["owner"]["user_id"],
        at=clock.now(),
    )
    record_transition(shared_pool(), owner_scope(state), state["workflow_id"], entry)
    return {"workflow_state": transition.to_state.value, "audit": [entry]}
