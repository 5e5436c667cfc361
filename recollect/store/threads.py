"""Who owns each thread: checked before a thread is read or resumed, and used to find a
user's checkpoints when they ask to be forgotten.

Row-level security hides other users' threads, so a claim that collides with an invisible
row can only mean the id belongs to someone else.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from psycopg_pool import ConnectionPool
from pydantic import BaseModel, ConfigDict

from recollect.store.errors import ThreadAccessError
from recollect.store.scope import Scope
from recollect.store.tenancy import scoped

CLAIM_THREAD = """
INSERT INTO threads (thread_id, org_id, user_id, kind)
VALUES (%(thread_id)s, %(org_id)s, %(user_id)s, %(kind)s)
ON CONFLICT (thread_id) DO NOTHING
"""
TOUCH_THREAD = """
UPDATE threads SET last_active_at = now() WHERE thread_id = %(thread_id)s
RETURNING thread_id, org_id, user_id, kind, created_at, last_active_at
"""
LIST_THREADS = """
SELECT thread_id, org_id, user_id, kind, created_at, last_active_at
FROM threads ORDER BY last_active_at DESC
"""


class ThreadRecord(BaseModel):
    """One owned thread."""

    model_config = ConfigDict(frozen=True)

    thread_id: str
    org_id: str
    user_id: str
    kind: str
    created_at: datetime
    last_active_at: datetime


def claim_thread(
    pool: ConnectionPool[Any], scope: Scope, thread_id: str, kind: str = "agent"
) -> ThreadRecord:
    """Record `scope` as the owner of a new thread, or confirm it owns an existing one."""
    params = {"thread_id": thread_id, "org_id": scope.org_id, "user_id": scope.user_id}
    with scoped(pool, scope) as conn:
        conn.execute(CLAIM_THREAD, {**params, "kind": kind})
        row = conn.execute(TOUCH_THREAD, params).fetchone()
    if row is None:
        raise ThreadAccessError(thread_id)
    return ThreadRecord.model_validate(row)


def list_threads(pool: ConnectionPool[Any], scope: Scope) -> list[ThreadRecord]:
    """The scope's threads, most recently active first."""
    with scoped(pool, scope) as conn:
        rows = conn.execute(LIST_THREADS).fetchall()
    return [ThreadRecord.model_validate(row) for row in rows]
