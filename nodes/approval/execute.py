"""Pay the refund, once: re-running this step (after a crash, or a retry) pays nothing more."""

from __future__ import annotations

import os
import time
from typing import Any

from nodes.approval.common import fire, owner_scope, stored_approval
from recollect.approvals.machine import Decision, GuardContext, Outcome
from recollect.approvals.records import RefundRequest
from recollect.approvals.store import apply_refund, record_transition
from recollect.engine import clock, shared_pool
from state.approval import ApprovalState, ExecutionRecord

PAUSE_ENV = "RECOLLECT_EXECUTE_PAUSE_S"
"""Seconds to hold after the refund is committed and before the step returns. For crash
rehearsals and tests: it opens the window in which a kill leaves the effect applied but the
checkpoint still `executing`, the case idempotency exists for."""


def execute(state: ApprovalState) -> dict[str, Any]:
    """executing → completed (refund applied, now or before) or failed (refused). The
    approval, its approver and the request approved are read from the workflow's record,
    not from the checkpoint."""
    record = stored_approval(state)
    request = RefundRequest.model_validate(record.request)
    approved_by = record.decided_by or ""
    at = clock.now()
    result = apply_refund(
        shared_pool(), owner_scope(state), state["workflow_id"], request, approved_by, at
    )
    _pause()
    applied = result.outcome != "refused"
    note = (
        f"refund {result.refund.id} of {result.refund.amount} {result.refund.currency}"
        + (" (applied before this retry)" if result.outcome == "already_applied" else "")
        if result.refund
        else result.reason
    )
    transition, entry = fire(
        state,
        GuardContext(
            request_valid=True,
            decision=Decision.APPROVE,
            outcome=Outcome.APPLIED if applied else Outcome.FAILED,
        ),
        actor="system",
        at=clock.now(),
        note=note,
    )
    record_transition(shared_pool(), owner_scope(state), state["workflow_id"], entry)
    execution = ExecutionRecord(
        outcome=Outcome.APPLIED.value if applied else Outcome.FAILED.value,
        refund_id=result.refund.id if result.refund else None,
        executed_at=(result.refund.executed_at if result.refund else at).isoformat(),
        error=result.reason,
    )
    return {"workflow_state": transition.to_state.value, "execution": execution, "audit": [entry]}


def _pause() -> None:
    raw = os.environ.get(PAUSE_ENV, "")
    if raw:
        time.sleep(float(raw))
