"""Whether a workflow may act: the stored decision, never the checkpoint's word for it.

A checkpoint can be rewritten by anyone who may update the thread's state (`update_state(...,
as_node="review")`); the `approval_workflows` row's decision can only be written by a reviewer
through the database's checks. Execution therefore asks this module, with the row re-read.
"""

from __future__ import annotations

from recollect.approvals.machine import Decision, WorkflowState
from recollect.approvals.records import WorkflowRecord


def execution_refusal(
    workflow_id: str, record: WorkflowRecord | None, claimed: WorkflowState
) -> str | None:
    """Why the workflow may not execute, or None when its record holds another person's
    approval."""
    if record is None:
        return f"workflow {workflow_id!r} has no record; nothing was paid"
    if record.decision is not Decision.APPROVE or not record.decided_by:
        stored = record.decision.past if record.decision else "undecided"
        return (
            f"workflow {workflow_id!r} is {stored} in its record ({record.state.value}); the "
            f"checkpoint's {claimed.value!r} is not a decision, so nothing was paid"
        )
    if record.decided_by == record.user_id:
        return f"workflow {workflow_id!r} was approved by its own requester; nothing was paid"
    return None
