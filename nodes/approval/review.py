"""The human gate: `interrupt()` with a typed payload until a valid decision comes back.

An answer that does not fit `ReviewDecision`, or that this reviewer may not give, is not an
error of the run: the step asks again with the reason in the payload, so the workflow stays
`submitted_for_review`, nothing is recorded, and the next answer can be right. (Resuming a
node re-runs it; the earlier `interrupt()` calls replay their earlier answers, which is how
LangGraph's documented validation loop works.)
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import interrupt
from pydantic import ValidationError

from nodes.approval.common import fire, owner_scope
from nodes.context import context_of
from recollect.approvals.machine import Decision, GuardContext
from recollect.approvals.records import WORKFLOW_KIND_REFUND, ReviewDecision
from recollect.approvals.store import record_transition
from recollect.store import clock
from recollect.store.pool import shared_pool
from state.approval import ApprovalState, DecisionRecord, ReviewRequest
from state.context import Context


def review_request(state: ApprovalState, error: str | None = None) -> ReviewRequest:
    """What the reviewer is shown, including the schema their answer must fit."""
    submitted = next(
        (e["at"] for e in reversed(state.get("audit", [])) if e["transition"] == "submit"), ""
    )
    return ReviewRequest(
        workflow_id=state["workflow_id"],
        kind=WORKFLOW_KIND_REFUND,
        request=state["request"],
        owner=state["owner"],
        submitted_at=submitted,
        allowed_decisions=[d.value for d in Decision],
        response_schema=ReviewDecision.model_json_schema(),
        error=error,
    )


def refusal(state: ApprovalState, answer: Any, reviewer_org: str) -> str | ReviewDecision:
    """The validated decision, or why it cannot be accepted (one line)."""
    try:
        decision = ReviewDecision.model_validate(answer)
    except ValidationError as exc:
        return "invalid decision: " + "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'decision'}: {err['msg']}"
            for err in exc.errors()
        )
    owner = state["owner"]
    if reviewer_org != owner["org_id"]:
        return (
            f"a reviewer of organisation {reviewer_org!r} cannot decide a workflow of "
            f"organisation {owner['org_id']!r}"
        )
    if decision.by == owner["user_id"]:
        return f"{decision.by!r} asked for this refund and cannot decide it"
    return decision


def review(state: ApprovalState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Wait for the reviewer, then fire `approve` or `reject` and record who, when and why."""
    reviewer_org = context_of(runtime).org_id
    error: str | None = None
    while True:
        answer = interrupt(review_request(state, error))
        checked = refusal(state, answer, reviewer_org)
        if isinstance(checked, ReviewDecision):
            break
        error = checked
    at = clock.now()
    transition, entry = fire(
        state,
        GuardContext(request_valid=True, decision=checked.decision),
        actor=checked.by,
        at=at,
        note=checked.note,
    )
    record = DecisionRecord(
        decision=checked.decision.value,
        by=checked.by,
        org_id=reviewer_org,
        at=at.isoformat(),
        note=checked.note,
    )
    record_transition(
        shared_pool(),
        owner_scope(state),
        state["workflow_id"],
        entry,
        decision={"decision": record["decision"], "by": checked.by, "at": at, "note": checked.note},
    )
    return {
        "workflow_state": transition.to_state.value,
        "decision": record,
        "review_error": None,
        "audit": [entry],
    }
