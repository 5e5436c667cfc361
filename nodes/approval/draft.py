"""Create the workflow: validate the request, record who asked, and enter `draft`."""

from __future__ import annotations

from typing import Any

from langgraph.config import get_config
from langgraph.runtime import Runtime
from pydantic import ValidationError

from nodes.approval.common import thread_of, workflow_id_for
from recollect import Context, context_of
from recollect.approvals.errors import InvalidRequestError
from recollect.approvals.machine import WorkflowState
from recollect.approvals.records import WORKFLOW_KIND_REFUND, AuditEntry, Owner, RefundRequest
from recollect.approvals.store import NewWorkflow, record_workflow
from recollect.engine import Scope, clock, shared_pool
from state.approval import ApprovalState


def draft(state: ApprovalState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The run's context names the owner; the thread names the workflow."""
    if state.get("workflow_state"):
        raise InvalidRequestError(
            f"this thread already holds workflow {state.get('workflow_id')!r} "
            f"({state['workflow_state']}); start a new workflow on a new thread"
        )
    try:
        request = RefundRequest.model_validate(state.get("request") or {})
    except ValidationError as exc:
        raise InvalidRequestError(f"invalid refund request: {_errors(exc)}") from exc
    ctx = context_of(runtime)
    owner = Scope.for_user(ctx.org_id, ctx.user_id)
    thread = thread_of(get_config())
    workflow_id = workflow_id_for(thread)
    entry = AuditEntry(
        transition="create",
        from_state=None,
        to_state=WorkflowState.DRAFT.value,
        actor=owner.user_id,
        at=clock.now().isoformat(),
        note=request.reason,
    )
    record_workflow(
        shared_pool(),
        owner,
        NewWorkflow(
            id=workflow_id,
            thread_id=thread,
            kind=WORKFLOW_KIND_REFUND,
            request=request,
            origin_thread_id=state.get("origin_thread_id"),
            created=entry,
        ),
    )
    return {
        "workflow_id": workflow_id,
        "workflow_state": WorkflowState.DRAFT.value,
        "owner": Owner(org_id=owner.org_id, user_id=owner.user_id),
        "request": request.model_dump(mode="json"),
        "decision": None,
        "execution": None,
        "review_error": None,
        "audit": [entry],
    }


def _errors(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in err['loc']) or 'request'}: {err['msg']}" for err in exc.errors()
    )
