"""The extraction queue: one debounced job per thread, claimed with `FOR UPDATE SKIP LOCKED`.

A job is a promise to read a thread's buffered messages later; the messages themselves are
in `memory_job_messages` (written by the agent's `extract` node), so trimming a thread's
checkpoint never loses a turn before it is extracted. Under this package's checkpointer the
messages are held and the job scheduled only by the transaction that checkpoints the turn, so
a job never outlives its turn. A claim is a lease: a worker killed
mid-job leaves a `running` row whose lease expires, and the next claim picks it up again.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg import Connection
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from recollect.gate.secrets import mask_secrets
from recollect.store.errors import RecollectError
from recollect.store.scope import Scope
from recollect.store.storable import storable
from recollect.store.tenancy import SET_SCOPE, ascoped, scope_settings, scoped

BUFFER = """
WITH failed_turns AS (
    DELETE FROM memory_job_messages
    WHERE org_id = %(org_id)s AND user_id = %(user_id)s AND thread_id = %(thread_id)s
      AND held AND message_id <> ALL(%(ids)s::text[])
)
INSERT INTO memory_job_messages
    (org_id, user_id, session_id, thread_id, message_id, role, content, held, schedule)
SELECT %(org_id)s, %(user_id)s, %(session_id)s, %(thread_id)s, m.id, m.role, m.content, true,
       %(schedule)s::jsonb
FROM unnest(%(ids)s::text[], %(roles)s::text[], %(contents)s::text[])
     WITH ORDINALITY AS m(id, role, content, n)
ORDER BY m.n
ON CONFLICT DO NOTHING
"""
"""Buffer the messages not seen before, held: no job reads them until `RELEASE` runs. Held
rows of the thread that this turn does not send again belong to a turn that failed before its
checkpoint committed, and are dropped (runs on one thread follow each other)."""

RELEASE = """
WITH released AS (
    UPDATE memory_job_messages SET held = false
    WHERE org_id = current_setting('app.org_id', true)
      AND user_id = current_setting('app.user_id', true)
      AND thread_id = %(thread_id)s AND held AND message_id = ANY(%(ids)s::text[])
    RETURNING session_id, role, schedule, seq
), new AS (
    SELECT count(*) FILTER (WHERE role = 'user')::int AS turns,
           (array_agg(session_id ORDER BY seq DESC))[1] AS session_id,
           (array_agg(schedule ORDER BY seq DESC))[1] AS s
    FROM released
)
INSERT INTO memory_jobs (org_id, user_id, session_id, thread_id, turns, model, min_confidence,
                         run_after)
SELECT current_setting('app.org_id', true), current_setting('app.user_id', true),
       new.session_id, %(thread_id)s, new.turns, new.s->>'model',
       (new.s->>'min_confidence')::real,
       CASE WHEN new.turns >= (new.s->>'every')::int THEN now()
            ELSE now() + make_interval(secs => (new.s->>'idle')::float8) END
FROM new
WHERE new.turns > 0
ON CONFLICT (org_id, user_id, thread_id) WHERE status = 'pending' DO UPDATE
SET turns = memory_jobs.turns + EXCLUDED.turns,
    model = EXCLUDED.model,
    min_confidence = EXCLUDED.min_confidence,
    run_after = CASE WHEN memory_jobs.turns + EXCLUDED.turns >= (SELECT (s->>'every')::int FROM new)
                     THEN now()
                     ELSE now() + make_interval(secs => (SELECT (s->>'idle')::float8 FROM new))
                END,
    updated_at = now()
RETURNING id, turns, run_after
"""
"""Release the thread's held messages among `ids` and, when a user message among them is new,
(re)schedule the thread's pending job, in the caller's scoped transaction: the checkpointer's
own when it commits the turn (`history.owned_checkpoints`), the enqueue's when the turn's
checkpointer is not ours. A re-sent turn releases nothing and schedules nothing."""

CLAIM_JOB = """
SELECT * FROM recollect_claim_job(%(token)s::uuid, %(lease)s::float8, %(thread_id)s::text,
                                  %(ignore_debounce)s::boolean)
"""
"""Across tenants, for the worker role only (see `store.schema.definers`)."""

CLAIM_OWN_JOB = """
SELECT * FROM recollect_claim_own_job(%(token)s::uuid, %(lease)s::float8, %(thread_id)s::text,
                                      %(ignore_debounce)s::boolean)
"""
"""The scope's own jobs only: what a request-serving process (the `memory` graph) may claim."""

CLAIM_JOB_FOR_MODELS = """
SELECT * FROM recollect_claim_job_for_models(%(token)s::uuid, %(lease)s::float8,
                                             %(thread_id)s::text, %(ignore_debounce)s::boolean,
                                             %(models)s::text[])
"""

FINISH_JOB = """
UPDATE memory_jobs
SET status = 'done', facts_found = %(facts)s, finished_at = now(), updated_at = now(),
    lease_until = NULL, last_error = NULL
WHERE id = %(id)s AND status = 'running' AND claim_token = %(token)s
"""

FAIL_JOB = """
SELECT status FROM recollect_fail_job(%(id)s::bigint, %(token)s::uuid, %(error)s::text,
                                      %(max_attempts)s::integer, %(backoff)s::float8) AS status
"""

SELECT_JOB = "SELECT * FROM memory_jobs WHERE id = %(id)s"

SELECT_JOBS_FOR_USER = """
SELECT * FROM memory_jobs WHERE org_id = %(org_id)s AND user_id = %(user_id)s ORDER BY id
"""

COUNT_OPEN_JOBS = "SELECT recollect_open_jobs() AS n"

PRUNE_FINISHED = "SELECT recollect_prune_jobs(%(days)s::float8) AS n"

JOB_COUNTS = "SELECT status, n FROM recollect_job_counts()"

DEAD_JOBS = "SELECT * FROM recollect_dead_jobs(%(limit)s::integer)"

RETRY_DEAD_JOB = "SELECT id FROM recollect_retry_dead_job(%(id)s::bigint) AS id"


class QueueUnavailableError(RecollectError):
    """The turn could not be queued for extraction (the database did not answer)."""


@dataclass(frozen=True)
class Debounce:
    """Run a thread's job after `idle_s` without a new turn, or at once every `every_turns`."""

    idle_s: float = 30.0
    every_turns: int = 5


@dataclass(frozen=True)
class BufferedMessage:
    """A message as the `extract` node hands it over."""

    message_id: str
    role: str
    content: str


@dataclass(frozen=True)
class Job:
    """A claimed job; `token` proves the claim when finishing or failing it."""

    id: int
    scope: Scope
    thread_id: str
    attempts: int
    model: str
    min_confidence: float
    token: uuid.UUID
    created_at: datetime

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Job:
        return cls(
            id=row["id"],
            scope=Scope.for_user(row["org_id"], row["user_id"]),
            thread_id=row["thread_id"],
            attempts=row["attempts"],
            model=row["model"],
            min_confidence=float(row["min_confidence"]),
            token=row["claim_token"],
            created_at=row["created_at"],
        )


def enqueue(
    pool: ConnectionPool[Any],
    scope: Scope,
    thread_id: str,
    messages: Sequence[BufferedMessage],
    *,
    debounce: Debounce,
    model: str = "",
    min_confidence: float = 0.7,
    held: bool = False,
) -> int | None:
    """Buffer the messages not seen before and (re)schedule the thread's pending job.

    One short transaction on the reply path; returns the job id, or None when nothing new
    was said (a re-run of the same turn queues nothing). `held`: leave the messages for the
    transaction that checkpoints the turn to release (`release_turn`), so a turn that fails
    before its checkpoint commits queues nothing."""
    params = _enqueue_params(scope, thread_id, messages, debounce, model, min_confidence)
    try:
        with scoped(pool, scope) as conn:
            conn.execute(BUFFER, params)
            return None if held else _job_id(conn.execute(RELEASE, params).fetchall())
    except psycopg.OperationalError as exc:
        raise QueueUnavailableError(
            f"cannot queue thread {thread_id} for extraction: {exc}"
        ) from exc


async def aenqueue(
    pool: AsyncConnectionPool[Any],
    scope: Scope,
    thread_id: str,
    messages: Sequence[BufferedMessage],
    *,
    debounce: Debounce,
    model: str = "",
    min_confidence: float = 0.7,
    held: bool = False,
) -> int | None:
    """The async twin of `enqueue`: the same statement, sent with its transaction in one
    pipeline and read once the transaction is back (one round trip)."""
    params = _enqueue_params(scope, thread_id, messages, debounce, model, min_confidence)
    try:
        async with ascoped(pool, scope) as conn:
            await conn.execute(BUFFER, params)
            cursor = None if held else await conn.execute(RELEASE, params)
        return None if cursor is None else _job_id(await cursor.fetchall())
    except psycopg.OperationalError as exc:
        raise QueueUnavailableError(
            f"cannot queue thread {thread_id} for extraction: {exc}"
        ) from exc


def _enqueue_params(
    scope: Scope,
    thread_id: str,
    messages: Sequence[BufferedMessage],
    debounce: Debounce,
    model: str,
    min_confidence: float,
) -> dict[str, Any]:
    """The enqueue's parameters, once for both forms."""
    return {
        **_scope_params(scope, thread_id),
        "ids": [m.message_id for m in messages],
        "roles": [m.role for m in messages],
        "contents": [storable(m.content) for m in messages],
        "schedule": Jsonb(
            {
                "model": model,
                "min_confidence": min_confidence,
                "every": debounce.every_turns,
                "idle": debounce.idle_s,
            }
        ),
    }


def _job_id(rows: list[dict[str, Any]]) -> int | None:
    """The scheduled job's id; None when no new user message was buffered."""
    return int(rows[0]["id"]) if rows else None


def claim(
    conn: Connection[Any],
    *,
    lease_s: float,
    thread_id: str | None = None,
    ignore_debounce: bool = False,
    scope: Scope | None = None,
    models: Sequence[str] | None = None,
) -> Job | None:
    """Take the next due job (or one whose lease expired); None when there is none. With a
    scope, only that scope's jobs (the app role's right); without, any tenant's (the worker
    role's). `models`: only jobs queued for one of these (or for the default model, "");
    None: any."""
    params: dict[str, Any] = {
        "token": uuid.uuid4(),
        "lease": lease_s,
        "thread_id": thread_id,
        "ignore_debounce": ignore_debounce,
    }
    with conn.transaction():
        if scope is not None:
            conn.execute(SET_SCOPE, scope_settings(scope))
            row = conn.execute(CLAIM_OWN_JOB, params).fetchone()
        elif models is None:
            row = conn.execute(CLAIM_JOB, params).fetchone()
        else:
            row = conn.execute(CLAIM_JOB_FOR_MODELS, {**params, "models": list(models)}).fetchone()
    return Job.from_row(row) if row else None


def finish(conn: Connection[Any], job: Job, facts: int) -> bool:
    """Mark the job done inside the caller's transaction; False if the lease was lost."""
    return (
        conn.execute(FINISH_JOB, {"id": job.id, "token": job.token, "facts": facts}).rowcount == 1
    )


def fail(
    conn: Connection[Any], job: Job, error: str, *, max_attempts: int, backoff_s: float
) -> str | None:
    """Schedule a retry after `backoff_s`, or dead-letter the job; returns its new status.
    The error is stored with its secrets masked (it may quote what was said)."""
    with conn.transaction():
        row = conn.execute(
            FAIL_JOB,
            {
                "id": job.id,
                "token": job.token,
                "error": mask_secrets(error),
                "max_attempts": max_attempts,
                "backoff": backoff_s,
            },
        ).fetchone()
    return str(row["status"]) if row else None


def open_jobs(conn: Connection[Any]) -> int:
    """Jobs still to run (pending, or running under a live lease)."""
    row = conn.execute(COUNT_OPEN_JOBS).fetchone()
    return int(row["n"]) if row else 0


def _scope_params(scope: Scope, thread_id: str) -> dict[str, Any]:
    return {
        "org_id": scope.org_id,
        "user_id": scope.user_id,
        "session_id": scope.session_id,
        "thread_id": thread_id,
    }


def status_counts(conn: Connection[Any]) -> dict[str, int]:
    """How many jobs are in each state."""
    return {row["status"]: int(row["n"]) for row in conn.execute(JOB_COUNTS)}


def dead_letters(conn: Connection[Any], limit: int = 20) -> list[dict[str, Any]]:
    """The newest dead-lettered jobs, with the error that ended each."""
    return list(conn.execute(DEAD_JOBS, {"limit": limit}).fetchall())


def jobs_for_user(conn: Connection[Any], scope: Scope) -> list[dict[str, Any]]:
    """The scope's own jobs, oldest first (row-level security keeps others out)."""
    params = {"org_id": scope.org_id, "user_id": scope.user_id}
    return list(conn.execute(SELECT_JOBS_FOR_USER, params).fetchall())


def retry_all_dead(conn: Connection[Any], limit: int = 1000) -> list[int]:
    """Requeue every dead-lettered job (after a configuration fix); returns the ids requeued."""
    return [int(d["id"]) for d in dead_letters(conn, limit) if retry_dead(conn, int(d["id"]))]


def retry_dead(conn: Connection[Any], job_id: int) -> bool:
    """Put a dead job back in the queue with fresh attempts; False if it is not dead, or if
    its thread already has a pending job (which will read the same messages)."""
    return conn.execute(RETRY_DEAD_JOB, {"id": job_id}).fetchone() is not None


def prune_finished(conn: Connection[Any], days: float) -> int:
    """Forget finished jobs older than `days`; dead letters stay until someone looks."""
    row = conn.execute(PRUNE_FINISHED, {"days": days}).fetchone()
    return int(row["n"]) if row else 0
