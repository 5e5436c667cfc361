"""The approval subgraph's own state and the reviewer's payloads.

Checkpointed fields are TypedDicts of JSON values (plain dicts on disk, readable over the HTTP
API). The TypedDicts come from `typing_extensions` because pydantic can only build JSON schemas
(Studio's forms, the API's `/schemas`) from those on Python 3.11.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, NotRequired

from typing_extensions import TypedDict

from recollect import Context
from recollect.approvals.records import AuditEntry, Owner


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


@dataclass(kw_only=True)
class ApprovalContext(Context):
    """The approval workflow has no run settings: who drafts and who reviews come from
    authentication, and the transition table decides the rest."""

    offered_settings: ClassVar[frozenset[str] | None] = frozenset()
