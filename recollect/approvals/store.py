"""Approval workflows in Postgres: the record, its audit trail, and the refund side effect.

The `approval_workflows` row is the system of record for a decision: the checkpoint says where
the graph stands, but a decision exists only once `recollect_decide_workflow` wrote it (as a
reviewer, in the reviewer's scope), and execution re-reads it from here. Every write is
idempotent, because a step that crashed after committing here but before its checkpoint was
saved runs again on resume:
- the audit trail is keyed by (workflow, transition), and each transition happens once;
- a state change applies only from the state the step left (or is a no-op if already made);
- a refund is keyed by its workflow and by its normalised order id, so a retried execution
  finds the refund it already made and no order is paid twice.
Each function runs in one `scoped` transaction with the tenant's settings.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg import Connection, sql
from psycopg.errors import InsufficientPrivilege, RaiseException, UniqueViolation
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from recollect.approvals.errors import DecisionRefusedError
from recollect.approvals.records import (
    AuditEntry,
    AuditRecord,
    RefundOutcome,
    RefundRecord,
    RefundRequest,
    WorkflowRecord,
)
from recollect.store.keepalive import kept_alive
from recollect.store.scope import Scope
from recollect.store.tenancy import scoped

DECISION_LOCK_CLASS = 0x4150  # "AP": advisory-lock class for "a reviewer is deciding this"
TRY_DECISION_LOCK = sql.SQL("SELECT pg_try_advisory_xact_lock({}, hashtext({})) AS locked")
"""Transaction-level: it ends with the transaction that took it, on whichever server
connection a pooler gave that transaction; there is no unlock to send. Sent as a simple query
(values inlined as literals): an extended-protocol one would keep its portal, and a snapshot
that holds back vacuum, for as long as the decision takes."""

INSERT_WORKFLOW = """
INSERT INTO approval_workflows (id, thread_id, org_id, user_id, kind, state, request,
                                origin_thread_id, created_at, updated_at)
VALUES (%(id)s, %(thread_id)s, %(org_id)s, %(user_id)s, %(kind)s, %(state)s, %(request)s,
        %(origin_thread_id)s, %(at)s, %(at)s)
ON CONFLICT (id) DO NOTHING
"""
CLAIM_APPROVAL_THREAD = """
INSERT INTO threads (thread_id, org_id, user_id, kind)
VALUES (%(thread_id)s, %(org_id)s, %(user_id)s, 'approval')
ON CONFLICT (thread_id) DO UPDATE SET kind = 'approval'
WHERE threads.org_id = EXCLUDED.org_id AND threads.user_id = EXCLUDED.user_id
"""
"""The workflow's thread is owned like an agent thread: ownership checks and erasure reach it."""

UPDATE_STATE = """
UPDATE approval_workflows SET state = %(state)s, updated_at = %(at)s
WHERE id = %(id)s AND org_id = %(org_id)s AND user_id = %(user_id)s
  AND state IN (%(from_state)s, %(state)s)
"""
"""Compare-and-set: a step moves the record only from the state it acted in."""

DECIDE = "SELECT recollect_decide_workflow(%(id)s, %(decision)s, %(note)s, %(at)s) AS state"
"""The only way a decision is written (see `store/schema/approval_authority.py`)."""

INSERT_AUDIT = """
INSERT INTO approval_audit (workflow_id, transition, org_id, user_id, from_state, to_state,
                            actor, note, at)
VALUES (%(id)s, %(transition)s, %(org_id)s, %(user_id)s, %(from_state)s, %(to_state)s,
        %(actor)s, %(note)s, %(at)s)
ON CONFLICT (workflow_id, transition) DO NOTHING
"""

SELECT_WORKFLOW = """
SELECT * FROM approval_workflows WHERE id = %(id)s AND org_id = %(org_id)s
"""

LIST_WORKFLOWS = """
SELECT * FROM approval_workflows
WHERE org_id = %(org_id)s
  AND (%(user_id)s::text IS NULL OR user_id = %(user_id)s)
  AND (%(state)s::text IS NULL OR state = %(state)s)
ORDER BY created_at, id
LIMIT %(limit)s
"""

SELECT_OPEN_FOR_ORDER = """
SELECT * FROM approval_workflows
WHERE org_id = %(org_id)s AND user_id = %(user_id)s AND request ->> 'order_id' = %(order_id)s
  AND state NOT IN ('rejected', 'completed', 'failed')
ORDER BY created_at, id
LIMIT 1
"""

SELECT_AUDIT = """
SELECT transition, from_state, to_state, actor, note, at FROM approval_audit
WHERE workflow_id = %(id)s AND org_id = %(org_id)s
ORDER BY at, CASE transition WHEN 'create' THEN 0 ELSE 1 END
"""

INSERT_REFUND = """
INSERT INTO refunds (workflow_id, org_id, user_id, order_id, amount, currency, reason,
                     approved_by, executed_at)
VALUES (%(id)s, %(org_id)s, %(user_id)s, %(order_id)s, %(amount)s, %(currency)s, %(reason)s,
        %(approved_by)s, %(at)s)
ON CONFLICT (workflow_id) DO NOTHING
RETURNING *
"""

SELECT_REFUNDS = """
SELECT * FROM refunds WHERE workflow_id = %(id)s AND org_id = %(org_id)s ORDER BY id
"""

SELECT_ORDER_REFUND = """
SELECT workflow_id FROM refunds WHERE org_id = %(org_id)s AND order_id = %(order_id)s
"""


@dataclass(frozen=True)
class NewWorkflow:
    """What `record_workflow` inserts."""

    id: str
    thread_id: str
    kind: str
    request: RefundRequest
    origin_thread_id: str | None
    created: AuditEntry


@dataclass(frozen=True)
class RefundResult:
    """The effect of `apply_refund`: applied now, applied before (a retry), or refused."""

    outcome: RefundOutcome
    refund: RefundRecord | None
    reason: str | None = None


def record_workflow(pool: ConnectionPool[Any], owner: Scope, workflow: NewWorkflow) -> None:
    """Insert the workflow in its first state, with its `create` audit entry (idempotent)."""
    with scoped(pool, owner) as conn:
        conn.execute(
            INSERT_WORKFLOW,
            {
                "id": workflow.id,
                "thread_id": workflow.thread_id,
                "org_id": owner.org_id,
                "user_id": owner.user_id,
                "kind": workflow.kind,
                "state": workflow.created["to_state"],
                "request": Jsonb(workflow.request.model_dump(mode="json")),
                "origin_thread_id": workflow.origin_thread_id,
                "at": workflow.created["at"],
            },
        )
        _audit(conn, owner, workflow.id, workflow.created)
        conn.execute(
            CLAIM_APPROVAL_THREAD,
            {"thread_id": workflow.thread_id, "org_id": owner.org_id, "user_id": owner.user_id},
        )


def record_transition(
    pool: ConnectionPool[Any], owner: Scope, workflow_id: str, entry: AuditEntry
) -> None:
    """Move the record from `entry["from_state"]` to `entry["to_state"]` and log it; a record
    that is in neither (a checkpoint that no longer tells the truth) is refused, unchanged."""
    with scoped(pool, owner) as conn:
        _transition(conn, owner, workflow_id, entry)


def record_decision(
    pool: ConnectionPool[Any],
    reviewer: Scope,
    workflow_id: str,
    decision: str,
    note: str | None,
    at: datetime,
) -> str:
    """Write the reviewer's decision through the database's checks; the new state, or
    `DecisionRefusedError` saying why (not a reviewer, the requester, decided before)."""
    params = {"id": workflow_id, "decision": decision, "note": note, "at": at}
    try:
        with scoped(pool, reviewer) as conn:
            row = conn.execute(DECIDE, params).fetchone()
    except RaiseException as exc:
        raise DecisionRefusedError(exc.diag.message_primary or str(exc)) from None
    assert row is not None
    return str(row["state"])


def record_refusal(
    pool: ConnectionPool[Any], owner: Scope, workflow_id: str, entry: AuditEntry
) -> None:
    """Keep a refused step in the audit trail (once per workflow); the state is unchanged."""
    with scoped(pool, owner) as conn:
        _audit(conn, owner, workflow_id, entry)


def apply_refund(
    pool: ConnectionPool[Any],
    owner: Scope,
    workflow_id: str,
    request: RefundRequest,
    approved_by: str,
    at: datetime,
) -> RefundResult:
    """Pay the refund once per workflow; a second call returns the first call's refund.

    An order already refunded by another workflow of the organisation is refused rather than
    paid twice, and so is a workflow whose stored decision is not another person's approval
    (the database's `paid_only_when_approved` policy).
    """
    params = {
        **_keys(owner, workflow_id),
        "order_id": request.order_id,
        "amount": request.amount,
        "currency": request.currency,
        "reason": request.reason,
        "approved_by": approved_by,
        "at": at,
    }
    try:
        with scoped(pool, owner) as conn:
            row = conn.execute(INSERT_REFUND, params).fetchone()
            if row is None:
                existing = conn.execute(SELECT_REFUNDS, params).fetchone()
                if existing is not None:
                    return RefundResult("already_applied", RefundRecord.model_validate(existing))
            else:
                return RefundResult("applied", RefundRecord.model_validate(row))
    except UniqueViolation:
        pass
    except InsufficientPrivilege:
        return RefundResult(
            "refused", None, f"workflow {workflow_id} holds no approval by a reviewer"
        )
    with scoped(pool, owner) as conn:
        other = conn.execute(SELECT_ORDER_REFUND, params).fetchone()
    holder = other["workflow_id"] if other else "another workflow"
    return RefundResult(
        "refused", None, f"order {request.order_id} was already refunded by workflow {holder}"
    )


def find_workflow(
    pool: ConnectionPool[Any], viewer: Scope, workflow_id: str
) -> WorkflowRecord | None:
    """The workflow if it belongs to the viewer's organisation, else None."""
    with scoped(pool, viewer) as conn:
        row = conn.execute(SELECT_WORKFLOW, _keys(viewer, workflow_id)).fetchone()
    return WorkflowRecord.model_validate(row) if row else None


def open_workflow_for_order(
    pool: ConnectionPool[Any], owner: Scope, order_id: str
) -> WorkflowRecord | None:
    """The owner's unfinished workflow for this order, if one exists."""
    with scoped(pool, owner) as conn:
        row = conn.execute(
            SELECT_OPEN_FOR_ORDER,
            {"org_id": owner.org_id, "user_id": owner.user_id, "order_id": order_id},
        ).fetchone()
    return WorkflowRecord.model_validate(row) if row else None


@dataclass(frozen=True)
class WorkflowDetail:
    """A workflow with its trail and effects, read in one transaction."""

    record: WorkflowRecord
    audit: list[AuditRecord]
    refunds: list[RefundRecord]


def workflow_detail(
    pool: ConnectionPool[Any], viewer: Scope, workflow_id: str
) -> WorkflowDetail | None:
    """Record, audit trail and refunds as of one snapshot, or None outside the viewer's org."""
    keys = _keys(viewer, workflow_id)
    with scoped(pool, viewer) as conn:
        row = conn.execute(SELECT_WORKFLOW, keys).fetchone()
        if row is None:
            return None
        audit = conn.execute(SELECT_AUDIT, keys).fetchall()
        refunds = conn.execute(SELECT_REFUNDS, keys).fetchall()
    return WorkflowDetail(
        WorkflowRecord.model_validate(row),
        [AuditRecord.model_validate(a) for a in audit],
        [RefundRecord.model_validate(r) for r in refunds],
    )


def list_workflows(
    pool: ConnectionPool[Any],
    viewer: Scope,
    *,
    user_id: str | None = None,
    state: str | None = None,
    limit: int = 100,
) -> list[WorkflowRecord]:
    """Workflows of the viewer's organisation, oldest first, optionally of one user or state."""
    with scoped(pool, viewer) as conn:
        rows = conn.execute(
            LIST_WORKFLOWS,
            {"org_id": viewer.org_id, "user_id": user_id, "state": state, "limit": limit},
        ).fetchall()
    return [WorkflowRecord.model_validate(row) for row in rows]


def _keys(scope: Scope, workflow_id: str) -> dict[str, Any]:
    return {"id": workflow_id, "org_id": scope.org_id, "user_id": scope.user_id}


def _transition(conn: Connection[Any], owner: Scope, workflow_id: str, entry: AuditEntry) -> None:
    moved = conn.execute(
        UPDATE_STATE,
        {
            **_keys(owner, workflow_id),
            "from_state": entry["from_state"],
            "state": entry["to_state"],
            "at": entry["at"],
        },
    )
    if moved.rowcount != 1:
        raise DecisionRefusedError(
            f"workflow {workflow_id!r} is not {entry['from_state']!r} in its record; "
            f"{entry['transition']!r} was refused and nothing was changed"
        )
    _audit(conn, owner, workflow_id, entry)


def _audit(conn: Connection[Any], owner: Scope, workflow_id: str, entry: AuditEntry) -> None:
    conn.execute(INSERT_AUDIT, {**_keys(owner, workflow_id), **entry})


@contextmanager
def deciding(pool: ConnectionPool[Any], workflow_id: str) -> Iterator[None]:
    """Hold "a reviewer is deciding this workflow" for the block, across processes; a second
    reviewer is refused at once rather than queued behind the first.

    The lock is held by a transaction left open on a connection of its own for the block (it
    writes nothing and is rolled back): a transaction pooler keeps one server connection for
    it, and the lock is gone when the block ends, however it ends. The transaction is kept
    alive meanwhile (`kept_alive`), so a server's or pooler's idle-in-transaction limit shorter
    than the decision cannot end it, and free the lock, half-way through."""
    with pool.connection() as conn, conn.transaction(force_rollback=True):
        try_lock = TRY_DECISION_LOCK.format(
            sql.Literal(DECISION_LOCK_CLASS), sql.Literal(workflow_id)
        )
        row = conn.execute(try_lock, prepare=False).fetchone()
        if not row or not row["locked"]:
            raise DecisionRefusedError(
                f"another reviewer is deciding workflow {workflow_id!r} right now"
            )
        with kept_alive(conn):
            yield
