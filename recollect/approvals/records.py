"""The records of an approval workflow: the validated request and decision, and the rows kept.

What crosses a trust boundary (the request, the reviewer's decision) is a pydantic model,
validated first; TypedDicts come from `typing_extensions` so pydantic can build JSON schemas
from them on Python 3.11 (Studio's forms, the API's `/schemas`).
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from typing_extensions import TypedDict

from recollect.approvals.machine import Decision, WorkflowState
from recollect.store.identity import normalise_order_id

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

    @field_validator("order_id", mode="after")
    @classmethod
    def _one_spelling(cls, value: str) -> str:
        """`ord-77`, `ORD-77` with a zero-width space and with U+2010 are one order, stored so."""
        return normalise_order_id(value)

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


class AuditEntry(TypedDict):
    """One transition, as the audit trail keeps it."""

    transition: str
    from_state: str | None
    to_state: str
    actor: str
    at: str
    note: str | None


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
