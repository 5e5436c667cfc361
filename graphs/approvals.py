"""Acting on approval workflows from Python: request, show, list, approve, reject, resume.

This is what the CLI and the agent's `request_refund` tool call. Each workflow runs the
approval graph on its own thread (`approval-<id>`) with the Postgres checkpointer, so any
process can pick it up later: the reviewer's `approve` resumes the graph's `interrupt()` with
`Command(resume=...)` and the graph carries on to execution in that process.

Checks that need no graph run happen here first, so a refused call changes nothing: a
workflow of another organisation is not found; a malformed decision is rejected against the
same schema the review step enforces; a reviewer name that normalises to the requester's is
refused; a workflow no longer awaiting review says who decided it and when; a concurrent
reviewer is turned away by an advisory lock.

Who sees what: a requester (`viewer=` with no permissions) sees their own workflows; a
reviewer (`permissions={"reviewer"}`) the organisation's. Python callers are trusted code,
so the defaults act as the operator's console: `SYSTEM_VIEWER` with the reviewer permission,
and `approve`/`reject` act as a reviewer named by `by`. Code that acts for a person (the
agent's tools, an HTTP handler) passes that person's id and permissions.
"""

from __future__ import annotations

import contextvars
import uuid
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command, StateSnapshot
from psycopg_pool import ConnectionPool
from pydantic import BaseModel, ConfigDict, ValidationError

from graphs.approval import make_graph
from nodes.approval.common import thread_id_for
from recollect import Context
from recollect.approvals.errors import (
    DecisionRefusedError,
    InvalidDecisionError,
    InvalidRequestError,
    WorkflowNotFoundError,
)
from recollect.approvals.machine import Decision, WorkflowState
from recollect.approvals.records import (
    AuditRecord,
    RefundRecord,
    RefundRequest,
    ReviewDecision,
    WorkflowRecord,
)
from recollect.approvals.store import (
    deciding,
    find_workflow,
    list_workflows,
    open_workflow_for_order,
    workflow_detail,
)
from recollect.engine import (
    REVIEWER,
    Scope,
    ScopedPostgresSaver,
    acting_as,
    normalise_id,
    shared_pool,
    use_pool,
)

SYSTEM_VIEWER = "approvals"
CONSOLE: frozenset[str] = frozenset({REVIEWER})
"""The operator's console reviews: it sees the organisation's workflows and may decide them
(never as their requester)."""


class WorkflowView(BaseModel):
    """Everything known about one workflow: its record, trail, effects and checkpoint."""

    model_config = ConfigDict(frozen=True)

    workflow: WorkflowRecord
    checkpoint_state: WorkflowState | None
    awaiting_review: bool
    next_steps: list[str]
    review_error: str | None
    audit: list[AuditRecord]
    refunds: list[RefundRecord]
    reused: bool = False
    """True when `request` found this unfinished workflow for the same order instead of
    starting another (a model that repeats a tool call files one request, not two)."""

    @property
    def id(self) -> str:
        return self.workflow.id

    @property
    def state(self) -> WorkflowState:
        return self.checkpoint_state or self.workflow.state


class Approvals:
    """Approval workflows over one pool and one checkpointer (sync, Postgres)."""

    def __init__(
        self, pool: ConnectionPool[Any], checkpointer: BaseCheckpointSaver[Any] | None = None
    ) -> None:
        self.pool = pool
        self.checkpointer = checkpointer or ScopedPostgresSaver(pool)
        self.graph = make_graph(checkpointer=self.checkpointer)

    # -- the requester ------------------------------------------------------------------

    def request(
        self,
        *,
        org_id: str,
        user_id: str,
        order_id: str,
        amount: Decimal | float | str,
        reason: str,
        currency: str = "USD",
        origin_thread_id: str | None = None,
    ) -> WorkflowView:
        """Start a refund workflow and run it to the review gate; it is then durable.

        An unfinished workflow of the same owner for the same order is returned instead
        (`reused=True`), so repeating a request does not queue a second one.
        """
        owner = Scope.for_user(org_id, user_id)
        try:
            request = RefundRequest.model_validate(
                {
                    "order_id": order_id,
                    "amount": amount if isinstance(amount, Decimal) else str(amount),
                    "reason": reason,
                    "currency": currency,
                }
            )
        except ValidationError as exc:
            raise InvalidRequestError(f"invalid refund request: {_describe(exc)}") from exc
        existing = open_workflow_for_order(self.pool, owner, request.order_id)
        if existing is not None:
            view = self.show(existing.id, org_id=org_id, viewer=owner.user_id, permissions=())
            return view.model_copy(update={"reused": True})
        workflow_id = uuid.uuid4().hex[:12]
        self._run(
            {"request": request.model_dump(mode="json"), "origin_thread_id": origin_thread_id},
            _thread(thread_id_for(workflow_id)),
            Context(org_id=owner.org_id, user_id=owner.user_id),
        )
        return self.show(workflow_id, org_id=org_id, viewer=owner.user_id, permissions=())

    # -- the reviewer -------------------------------------------------------------------

    def approve(
        self, workflow_id: str, *, org_id: str, by: str, note: str | None = None
    ) -> WorkflowView:
        """Approve and, in this process, execute."""
        return self.decide(
            workflow_id, {"decision": Decision.APPROVE.value, "by": by, "note": note}, org_id=org_id
        )

    def reject(self, workflow_id: str, *, org_id: str, by: str, reason: str) -> WorkflowView:
        """Reject, with the reason kept in the workflow and the table."""
        return self.decide(
            workflow_id,
            {"decision": Decision.REJECT.value, "by": by, "note": reason},
            org_id=org_id,
        )

    def decide(self, workflow_id: str, answer: Mapping[str, Any], *, org_id: str) -> WorkflowView:
        """Resume the review gate with `answer` (a `ReviewDecision` as JSON), as the reviewer
        its `by` names (normalised: `ALICE`, `alice` with a zero-width space and in full-width
        letters are one person, and a name mixing scripts is refused)."""
        try:
            decision = ReviewDecision.model_validate(answer)
        except ValidationError as exc:
            raise InvalidDecisionError(
                f"invalid decision for workflow {workflow_id!r}: {_describe(exc)}; "
                "nothing was changed"
            ) from exc
        by = normalise_id(decision.by, "reviewer")
        decision = decision.model_copy(update={"by": by})
        record = self._find(workflow_id, org_id, by, CONSOLE)
        if record.user_id == by:
            raise DecisionRefusedError(
                f"{by!r} asked for this refund and cannot decide it; nothing was changed"
            )
        config = _thread(record.thread_id)
        with deciding(self.pool, workflow_id):
            if not self._state(config, org_id, decision.by).interrupts:
                raise DecisionRefusedError(
                    _not_awaiting(self._find(workflow_id, org_id, by, CONSOLE))
                )
            self._run(
                Command(resume=decision.model_dump(mode="json")),
                config,
                Context(org_id=record.org_id, user_id=by, permissions=tuple(CONSOLE)),
            )
        view = self.show(workflow_id, org_id=org_id, viewer=by)
        if view.awaiting_review and view.review_error:
            raise DecisionRefusedError(f"workflow {record.id!r}: {view.review_error}")
        return view

    def resume(self, workflow_id: str, *, org_id: str, viewer: str = SYSTEM_VIEWER) -> WorkflowView:
        """Finish a run that stopped between steps (a crash or a kill); a no-op otherwise."""
        record = self._find(workflow_id, org_id, viewer, CONSOLE)
        config = _thread(record.thread_id)
        snapshot = self._state(config, org_id, viewer)
        if snapshot.next and not snapshot.interrupts:
            self._run(None, config, Context(org_id=record.org_id, user_id=record.user_id))
        return self.show(workflow_id, org_id=org_id, viewer=viewer)

    def stalled(self, *, org_id: str, viewer: str = SYSTEM_VIEWER) -> list[str]:
        """Workflows that may have stopped between steps (`resume` checks the checkpoint and
        does nothing where the run is in fact waiting for review or done)."""
        ids = []
        for state in (WorkflowState.DRAFT, WorkflowState.APPROVED, WorkflowState.EXECUTING):
            ids += [w.id for w in self.workflows(org_id=org_id, viewer=viewer, state=state)]
        return ids

    # -- anyone in the organisation ------------------------------------------------------

    def show(
        self,
        workflow_id: str,
        *,
        org_id: str,
        viewer: str = SYSTEM_VIEWER,
        permissions: Iterable[str] = CONSOLE,
    ) -> WorkflowView:
        """The workflow, its audit trail, its refunds and where its checkpoint stands; another
        requester's workflow is not found unless the viewer is a reviewer."""
        detail = workflow_detail(self.pool, _viewer(org_id, viewer, permissions), workflow_id)
        if detail is None:
            raise WorkflowNotFoundError(workflow_id, org_id)
        snapshot = self._state(_thread(detail.record.thread_id), org_id, viewer)
        values = snapshot.values or {}
        raw_state = values.get("workflow_state")
        interrupt_error = next(
            (i.value.get("error") for i in snapshot.interrupts if isinstance(i.value, dict)), None
        )
        return WorkflowView(
            workflow=detail.record,
            checkpoint_state=WorkflowState(raw_state) if raw_state else None,
            awaiting_review=bool(snapshot.interrupts),
            next_steps=list(snapshot.next),
            review_error=interrupt_error,
            audit=detail.audit,
            refunds=detail.refunds,
        )

    def workflows(
        self,
        *,
        org_id: str,
        viewer: str = SYSTEM_VIEWER,
        permissions: Iterable[str] = CONSOLE,
        user_id: str | None = None,
        state: WorkflowState | str | None = None,
    ) -> list[WorkflowRecord]:
        """Workflows the viewer may see (a requester's own, a reviewer's whole organisation),
        oldest first; filter by requester or state."""
        wanted = WorkflowState(state).value if state else None
        requester = normalise_id(user_id, "user id") if user_id else None
        return list_workflows(
            self.pool, _viewer(org_id, viewer, permissions), user_id=requester, state=wanted
        )

    def history(self, workflow_id: str, *, org_id: str) -> list[str]:
        """`workflow_state` at each checkpoint, oldest first (repeats collapsed)."""
        config = self.config_for(workflow_id, org_id=org_id)
        states: list[str] = []
        with acting_as(_console(org_id, SYSTEM_VIEWER)):
            snapshots = list(self.graph.get_state_history(config))
        for snapshot in reversed(snapshots):
            value = (snapshot.values or {}).get("workflow_state")
            if value and (not states or states[-1] != value):
                states.append(str(value))
        return states

    # -- plumbing -----------------------------------------------------------------------

    def _find(
        self, workflow_id: str, org_id: str, viewer: str, permissions: Iterable[str]
    ) -> WorkflowRecord:
        record = find_workflow(self.pool, _viewer(org_id, viewer, permissions), workflow_id)
        if record is None:
            raise WorkflowNotFoundError(workflow_id, org_id)
        return record

    def config_for(
        self,
        workflow_id: str,
        *,
        org_id: str,
        viewer: str = SYSTEM_VIEWER,
        permissions: Iterable[str] = CONSOLE,
    ) -> RunnableConfig:
        """The workflow's thread config, for `graph.get_state`, history or a direct resume."""
        return _thread(self._find(workflow_id, org_id, viewer, permissions).thread_id)

    def _state(self, config: RunnableConfig, org_id: str, viewer: str) -> StateSnapshot:
        with acting_as(_console(org_id, viewer)):
            return self.graph.get_state(config)

    def _run(self, payload: Any, config: RunnableConfig, ctx: Context) -> None:
        """Run the graph as a top-level run, even when called from inside another graph's
        step (the agent's tool): an empty `contextvars` context drops the caller's run config,
        so the workflow gets its own thread and its interrupt does not become the caller's.
        The steps use this object's pool."""
        contextvars.Context().run(self._invoke, payload, config, ctx)

    def _invoke(self, payload: Any, config: RunnableConfig, ctx: Context) -> None:
        acting = Scope.for_user(ctx.org_id, ctx.user_id, frozenset(ctx.permissions))
        with use_pool(self.pool), acting_as(acting):
            self.graph.invoke(payload, config, context=ctx, durability="sync")


def _console(org_id: str, user_id: str) -> Scope:
    """Whom this API's checkpoint reads and writes act as: the named person, with the
    reviewer's reach over the organisation's workflows (this API is the operator's console;
    who may decide is checked by the workflow itself)."""
    return Scope.for_user(org_id, user_id or SYSTEM_VIEWER, frozenset({REVIEWER}))


def _viewer(org_id: str, viewer: str, permissions: Iterable[str]) -> Scope:
    """The scope a read runs in; row-level security decides what it sees."""
    return Scope.for_user(org_id, viewer or SYSTEM_VIEWER, frozenset(permissions))


def _thread(thread_id: str) -> RunnableConfig:
    """Workflows started here run on `approval-<id>`; over the HTTP API, on the API's thread."""
    return {"configurable": {"thread_id": thread_id}}


def process_approvals() -> Approvals:
    """Approvals on this process's shared pool (see `recollect.store.pool`)."""
    return Approvals(shared_pool())


def _not_awaiting(record: WorkflowRecord) -> str:
    state = record.state.value
    if record.decision is not None:
        when = record.decided_at.isoformat(timespec="seconds") if record.decided_at else "?"
        return (
            f"workflow {record.id!r} is no longer awaiting review: it was "
            f"{record.decision.past} by {record.decided_by} at {when} (now {state}); a "
            "decision is made once"
        )
    return f"workflow {record.id!r} is not awaiting review (it is {state})"


def _describe(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'value'}: {err['msg']}"
            for err in exc.errors()
        )
    return str(exc) or type(exc).__name__
