"""The approval subgraph's own state, the reviewer's payloads, and the rows it keeps.

Checkpointed fields are TypedDicts of JSON values (plain dicts on disk, readable over the HTTP
API); what crosses a trust boundary — the request and the reviewer's decision — is validated
by pydantic models first. The TypedDicts come from `typing_extensions` because pydantic can
only build JSON schemas (Studio's forms, the API's `/schemas`) from those on Python 3.11.
"""

from __future__ import annotations

import operator
from datetime import datetime
from decimal import Decimal
from typing import Annotated, Any, Literal, NotRequired

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from typing_extensions import TypedDict

from recollect.state.workflow import Decision, WorkflowState

MAX_REFUND_AMOUNT = Decimal("100000")
WORKFLOW_KIND_REFUND = "refund"


class RefundRequest(BaseModel):
    """What a customer asks for; validated before any workflow exists."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    order_id: str = Field(min_length=1, max_length=100)
    amount: Decimal = Field(gt=0, le=MAX_REFUND_AMOUNT, max_digits=12, decimal_places=2)
    currency: str = Field(default="USD", pattern=r"^[A-Z]{3}$")
    reason: str = Field(min_length=1, max_length=2000)

    @field_validator("order_id", "reason", mode="before")
    @classmethod
    def _strip(cls, value: Any) -> Any:
        return value.strip() if isinstance(value, str) else value

    @field_validator("amount", mode="after")
    @classmethod
    def _cents(cls, value: Decimal) -> Decimal:
        return value.quantize(Decimal("0.01"))


class ReviewDecision(BaseModel):
    """The only shape a reviewer's answer may take (the interrupt's response schema)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    decision: Decision
    by: str = Field(min_length=1, max_length=200, description="who decides")
    note: str | None = Field(default=None, max_length=2000, description="why; required to reject")

    @field_validator("by", "note", mode="before")
    @classmethod
    def _strip(cls, value: Any) -> Any:
        return value.strip() if isinstance(value, str) else value

    @model_validator(mode="after")
    def _reject_needs_reason(self) -> ReviewDecision:
        if self.decision is Decision.REJECT and not self.note:
            raise ValueError("a rejection needs a reason (note)")
        return self


class Owner(TypedDict):
    """Whose workflow this is: the requester's tenant scope."""

    org_id: str
    user_id: str


class ReviewRequest(TypedDict):
    """What `interrupt()` shows a reviewer: the request, and how to answer."""

    workflow_id: str
    kind: str
    request: dict[str, Any]
    owner: Owner
    submitted_at: str
    allowed_decisions: list[str]
    response_schema: dict[str, Any]
    error: str | None
    """Why the previous answer was refused, if it was."""


class DecisionRecord(TypedDict):
    """Who decided, when and why."""

    decision: str
    by: str
    org_id: str
    at: str
    note: str | None


class ExecutionRecord(TypedDict):
    """What the side effect did."""

    outcome: str
    refund_id: int | None
    executed_at: str
    error: str | None


class AuditEntry(TypedDict):
    """One transition, as the audit trail keeps it."""

    transition: str
    from_state: str | None
    to_state: str
    actor: str
    at: str
    note: str | None


class ApprovalState(TypedDict, total=False):
    """The subgraph's checkpointed state; routing reads `workflow_state` only."""

    workflow_id: str
    workflow_state: str
    """A `WorkflowState` value."""
    owner: Owner
    request: dict[str, Any]
    """A `RefundRequest`, as JSON."""
    decision: DecisionRecord | None
    execution: ExecutionRecord | None
    review_error: str | None
    origin_thread_id: str | None
    """The conversation that asked for it, when an agent did."""
    audit: Annotated[list[AuditEntry], operator.add]


class RefundRequestInput(TypedDict):
    """A `RefundRequest` as a caller sends it (what Studio's input form shows)."""

    order_id: str
    amount: str | float
    reason: str
    currency: NotRequired[str]


class ApprovalInput(TypedDict):
    """What starts a workflow: the request (the owner comes from the run's context)."""

    request: RefundRequestInput
    origin_thread_id: NotRequired[str | None]


class WorkflowRecord(BaseModel):
    """A workflow as the `approval_workflows` table keeps it."""

    model_config = ConfigDict(frozen=True)

    id: str
    thread_id: str
    org_id: str
    user_id: str
    kind: str
    state: WorkflowState
    request: dict[str, Any]
    decision: Decision | None = None
    decided_by: str | None = None
    decided_at: datetime | None = None
    decision_note: str | None = None
    origin_thread_id: str | None = None
    created_at: datetime
    updated_at: datetime


class AuditRecord(BaseModel):
    """One row of `approval_audit`."""

    model_config = ConfigDict(frozen=True)

    transition: str
    from_state: WorkflowState | None
    to_state: WorkflowState
    actor: str
    note: str | None
    at: datetime


class RefundRecord(BaseModel):
    """One executed refund: the workflow's side effect."""

    model_config = ConfigDict(frozen=True)

    id: int
    workflow_id: str
    org_id: str
    user_id: str
    order_id: str
    amount: Decimal
    currency: str
    reason: str
    approved_by: str
    executed_at: datetime


RefundOutcome = Literal["applied", "already_applied", "refused"]
