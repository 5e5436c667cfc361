"""Errors a requester or reviewer can act on; each says what was refused and why."""

from __future__ import annotations

from recollect.store.errors import RecollectError


class WorkflowNotFoundError(RecollectError):
    """No workflow with this id in the caller's organisation (another org's is not shown)."""

    def __init__(self, workflow_id: str, org_id: str) -> None:
        self.workflow_id = workflow_id
        self.org_id = org_id
        super().__init__(f"no approval workflow {workflow_id!r} in organisation {org_id!r}")


class InvalidDecisionError(RecollectError):
    """A reviewer's answer that does not fit the response schema; nothing was changed."""


class DecisionRefusedError(RecollectError):
    """A well-formed decision that this reviewer may not make, or not now."""


class InvalidRequestError(RecollectError):
    """A refund request that does not validate; no workflow was created."""


class ExecutionRefusedError(DecisionRefusedError):
    """A step that would act on a decision the workflow's record does not hold (a checkpoint
    edited to say "approved", say); nothing was paid and the refusal is in the audit trail."""
