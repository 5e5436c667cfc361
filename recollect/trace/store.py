"""The trace table's SQL: write a turn's trace (numbered in the same statement), record an
extraction job's verdicts, read a thread's traces back. Every statement runs in the owner's
scope, so row-level security decides what is visible. No trace row keeps a secret: every
string of a trace goes through `mask_secrets_in` on its way into the table, whichever node
gathered it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg import Connection
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from recollect.gate import mask_secrets_in
from recollect.store.scope import Scope
from recollect.store.tenancy import SET_SCOPE, scope_settings, scoped

OWNER = "org_id = %(org_id)s AND user_id = %(user_id)s"
THREAD = f"{OWNER} AND thread_id = %(thread_id)s"

CHECKPOINT_BYTES = """
(SELECT coalesce(sum(octet_length(b.blob)), 0) FROM checkpoint_blobs AS b
  WHERE b.thread_id = %(thread_id)s)
+ (SELECT coalesce(sum(pg_column_size(c.checkpoint) + pg_column_size(c.metadata)), 0)
   FROM checkpoints AS c WHERE c.thread_id = %(thread_id)s)
+ (SELECT coalesce(sum(octet_length(w.blob)), 0) FROM checkpoint_writes AS w
   WHERE w.thread_id = %(thread_id)s)
"""
"""The thread's checkpoint storage as Postgres holds it now (visible to its owner only)."""

INSERT_TURN = f"""
INSERT INTO memory_traces (org_id, user_id, thread_id, turn, kind, checkpoint_bytes, trace)
SELECT %(org_id)s, %(user_id)s, %(thread_id)s,
       coalesce((SELECT max(turn) FROM memory_traces WHERE {THREAD} AND kind = 'turn'), 0) + 1,
       'turn', {CHECKPOINT_BYTES}, %(trace)s
"""
INSERT_EXTRACTION = f"""
INSERT INTO memory_traces (org_id, user_id, thread_id, turn, kind, trace)
SELECT %(org_id)s, %(user_id)s, %(thread_id)s,
       coalesce((SELECT max(turn) FROM memory_traces WHERE {THREAD} AND kind = 'turn'), 0),
       'extraction', %(trace)s
"""
SELECT_THREAD = f"""
SELECT turn, kind, checkpoint_bytes, created_at, trace FROM memory_traces
WHERE {THREAD} AND (%(turn)s::integer IS NULL OR turn = %(turn)s::integer)
ORDER BY turn, id
"""
SELECT_SINCE = f"""
SELECT thread_id, turn, kind, checkpoint_bytes, created_at, trace FROM memory_traces
WHERE {OWNER} AND created_at >= %(since)s ORDER BY created_at, id
"""
MATCHING_FACTS = f"""
SELECT id::text AS id, text, category, confidence, learned_at,
       superseded_by::text AS superseded_by, deleted_at
FROM facts WHERE {OWNER} AND strpos(lower(text), lower(%(needle)s)) > 0
ORDER BY learned_at, id
"""
REVIEW_DEPTH = f"SELECT count(*) AS n FROM fact_candidates WHERE {OWNER} AND status = 'review'"
SUPERSEDED_SINCE = f"""
SELECT count(*) AS n FROM facts WHERE {OWNER} AND superseded_at >= %(since)s
"""


@dataclass(frozen=True)
class PendingTrace:
    """One turn's trace waiting to be written."""

    scope: Scope
    thread_id: str
    trace: dict[str, Any]


@dataclass(frozen=True)
class TraceRow:
    """One stored trace."""

    thread_id: str
    turn: int
    kind: str
    checkpoint_bytes: int | None
    created_at: datetime
    trace: dict[str, Any]


def _owner(scope: Scope, thread_id: str) -> dict[str, Any]:
    return {"org_id": scope.org_id, "user_id": scope.user_id, "thread_id": thread_id}


def write_turns(
    pool: ConnectionPool[Any], pending: Sequence[PendingTrace], *, timeout: float | None = None
) -> int:
    """Write turn traces in one transaction, each owner's rows under that owner's scope (the
    scope is transaction-local, so each `SET_SCOPE` holds until the next); returns rows
    written. One pipelined transaction for the whole batch: under load a batch holds many
    users' turns, and a transaction per owner cost more than the rows themselves. `timeout`
    bounds the wait for a connection (the pool's own timeout when None)."""
    by_scope: dict[Scope, list[PendingTrace]] = {}
    for item in pending:
        by_scope.setdefault(item.scope, []).append(item)
    written = 0
    with (
        pool.connection(timeout) as conn,
        conn.transaction(),
        conn.pipeline(),
        conn.cursor() as cur,
    ):
        for scope, items in by_scope.items():
            cur.execute(SET_SCOPE, scope_settings(scope))
            cur.executemany(
                INSERT_TURN,
                [{**_owner(scope, i.thread_id), "trace": _stored(i.trace)} for i in items],
            )
            written += len(items)
    return written


def record_extraction(
    conn: Connection[Any], scope: Scope, thread_id: str, trace: dict[str, Any]
) -> None:
    """An extraction job's verdicts, inside the job's own transaction (already in `scope`)."""
    conn.execute(INSERT_EXTRACTION, {**_owner(scope, thread_id), "trace": _stored(trace)})


def _stored(trace: dict[str, Any]) -> Jsonb:
    """A trace as the table keeps it: every string with its secrets masked."""
    return Jsonb(mask_secrets_in(trace))


def thread_traces(
    pool: ConnectionPool[Any], scope: Scope, thread_id: str, turn: int | None = None
) -> list[TraceRow]:
    """A thread's traces in turn order (extraction rows after the turn they followed)."""
    with scoped(pool, scope) as conn:
        rows = conn.execute(SELECT_THREAD, {**_owner(scope, thread_id), "turn": turn}).fetchall()
    return [TraceRow(thread_id=thread_id, **r) for r in rows]


def traces_since(pool: ConnectionPool[Any], scope: Scope, since: datetime) -> list[TraceRow]:
    """Every trace of the user's since `since`, oldest first."""
    with scoped(pool, scope) as conn:
        rows = conn.execute(SELECT_SINCE, {**_owner(scope, ""), "since": since}).fetchall()
    return [TraceRow(**r) for r in rows]


def matching_facts(pool: ConnectionPool[Any], scope: Scope, needle: str) -> list[dict[str, Any]]:
    """The user's long-term facts (live, superseded or deleted) whose text contains `needle`."""
    with scoped(pool, scope) as conn:
        return list(conn.execute(MATCHING_FACTS, {**_owner(scope, ""), "needle": needle}))


def memory_counts(pool: ConnectionPool[Any], scope: Scope, since: datetime) -> dict[str, int]:
    """Review-queue depth now and supersessions since `since`."""
    params = {**_owner(scope, ""), "since": since}
    with scoped(pool, scope) as conn:
        review = conn.execute(REVIEW_DEPTH, params).fetchone()
        superseded = conn.execute(SUPERSEDED_SINCE, params).fetchone()
    return {
        "review_queue": int(review["n"]) if review else 0,
        "supersessions": int(superseded["n"]) if superseded else 0,
    }
