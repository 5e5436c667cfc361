"""The human gate: `interrupt()` with a typed payload until a valid decision comes back.

An answer that does not fit `ReviewDecision`, or that this reviewer may not give, is not an
error of the run: the step ends with the reason in `review_error`, the workflow stays
`submitted_for_review`, and the router runs the step again, whose `interrupt()` shows the
reason and waits for the next answer. Each answer gets a fresh run of the step: a loop of
`interrupt()` calls inside one step would replay earlier, refused answers on every resume and
judge them again under the identity of whoever resumes next, so an answer someone planted in
a reviewer's name would be accepted when that reviewer comes.

Who decides is the run's identity (on the served API, the authenticated caller; on the
command line, the operator's console): it must hold the `reviewer` permission, the answer's
`by` must name it (compared after normalisation), and it may not be the requester. The
database checks the same again when the decision is written (`record_decision`), so a
decision that skips this step cannot be stored either.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import interrupt
from pydantic import ValidationError

from nodes.approval.common import fire
from recollect import Context, context_of
from recollect.approvals.errors import DecisionRefusedError
from recollect.approvals.machine import Decision, GuardContext
from recollect.approvals.records import WORKFLOW_KIND_REFUND, ReviewDecision
from recollect.approvals.store import record_decision
from recollect.engine import InvalidIdError, Scope, clock, normalise_id, shared_pool
from state.approval import ApprovalState, DecisionRecord, ReviewRequest


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


def refusal(state: ApprovalState, answer: Any, reviewer: Scope) -> str | ReviewDecision:
    """The validated decision (its `by` normalised), or why it cannot be accepted (one line)."""
    try:
        decision = ReviewDecision.model_validate(answer)
        by = normalise_id(decision.by, "reviewer")
    except ValidationError as exc:
        return "invalid decision: " + "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'decision'}: {err['msg']}"
            for err in exc.errors()
        )
    except InvalidIdError as exc:
        return str(exc)
    owner = state["owner"]
    if reviewer.org_id != owner["org_id"]:
        return (
            f"a reviewer of organisation {reviewer.org_id!r} cannot decide a workflow of "
            f"organisation {owner['org_id']!r}"
        )
    if not reviewer.is_reviewer:
        return f"{reviewer.user_id!r} is not a reviewer of organisation {reviewer.org_id!r}"
    if by != reviewer.user_id:
        return f"the decision is signed {by!r}, but it comes from {reviewer.user_id!r}"
    if by == owner["user_id"]:
        return f"{by!r} asked for this refund and cannot decide it"
    return decision.model_copy(update={"by": by})


def review(state: ApprovalState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Wait for the reviewer, then fire `approve` or `reject` and record who, when and why."""
    ctx = context_of(runtime)
    reviewer = Scope.for_user(ctx.org_id, ctx.user_id, frozenset(ctx.permissions))
    answer = interrupt(review_request(state, state.get("review_error")))
    checked = refusal(state, answer, reviewer)
    if isinstance(checked, str):
        return {"review_error": checked}
    at = clock.now()
    stored = _store(state, reviewer, checked, at)
    if stored is not None:
        return {"review_error": stored}
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
        org_id=reviewer.org_id,
        at=at.isoformat(),
        note=checked.note,
    )
    return {
        "workflow_state": transition.to_state.value,
        "decision": record,
        "review_error": None,
        "audit": [entry],
    }


def _store(
    state: ApprovalState, reviewer: Scope, decision: ReviewDecision, at: datetime
) -> str | None:
    """Write the decision through the database's checks; None, or why it was refused."""
    try:
        record_decision(
            shared_pool(),
            reviewer,
            state["workflow_id"],
            decision.decision.value,
            decision.note,
            at,
        )
    except DecisionRefusedError as exc:
        return str(exc)
    return None
