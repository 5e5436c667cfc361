""" "Forget me": delete one user's data from every store in one transaction, then prove it.

Every table with a `user_id` column must appear in `USER_TABLES` (a test compares it with
`information_schema`), so a new table cannot be forgotten silently. Checkpoints carry no
user id; they are found through the threads the user owns (agent threads and the threads of
their approval workflows). Refunds are deleted with the workflows that paid them: a deployment
that must keep financial records should export them (`recollect memory export`) first.

What she wrote elsewhere goes too: organisation-shared facts she authored (`facts.author_id`)
are deleted. What she did in other people's workflows stays, because it is their record, but
no longer names her: `recollect_forget_actor()` replaces her id in `ACTOR_COLUMNS` with a
stable pseudonym (`forgotten-` and 12 hex digits of a keyed SHA-256 of org and user; the key
never leaves the database) and drops the notes she wrote there.
"""

from __future__ import annotations

from typing import Any

from psycopg import Connection, sql
from psycopg_pool import ConnectionPool

from recollect.store.scope import ORG_ADMIN, ORG_OWNER, Scope
from recollect.store.tenancy import SET_SCOPE, scope_settings, scoped

CHECKPOINT_TABLES: tuple[str, ...] = ("checkpoint_writes", "checkpoint_blobs", "checkpoints")
"""LangGraph's tables, keyed by thread id."""

USER_TABLES: tuple[str, ...] = (
    "fact_encodings",
    "fact_words",
    "worded_scopes",
    "code_centres",
    "memory_traces",
    "store_items",
    "facts",
    "profiles",
    "episodes",
    "refunds",
    "approval_audit",
    "approval_workflows",
    "fact_candidates",
    "memory_job_messages",
    "memory_jobs",
    "threads",
)
"""Our tables with a `user_id` column, children before parents. `threads` goes last."""

ACTOR_COLUMNS: tuple[tuple[str, str], ...] = (
    ("approval_audit", "actor"),
    ("approval_workflows", "decided_by"),
    ("refunds", "approved_by"),
)
"""Columns that name a person acting on someone else's rows; pseudonymised, not deleted."""

AUTHOR_COLUMNS: tuple[tuple[str, str], ...] = (("facts", "author_id"),)
"""Columns that name who wrote a row owned by someone else (the organisation)."""

DELETE_AUTHORED_SHARED = f"""
DELETE FROM facts WHERE org_id = %s AND user_id = '{ORG_OWNER}' AND author_id = %s
"""
COUNT_AUTHORED_SHARED = f"""
SELECT count(*) AS n FROM facts WHERE org_id = %s AND user_id = '{ORG_OWNER}' AND author_id = %s
"""
PSEUDONYMISE_ACTOR = "SELECT recollect_forget_actor() AS alias"

OWNED_THREAD_IDS = """
SELECT thread_id FROM threads WHERE org_id = %(org)s AND user_id = %(user)s
UNION
SELECT thread_id FROM approval_workflows WHERE org_id = %(org)s AND user_id = %(user)s
"""
DELETE_CHECKPOINT_ROWS = "DELETE FROM {} WHERE thread_id = ANY(%s)"
COUNT_CHECKPOINT_ROWS = "SELECT count(*) AS n FROM {} WHERE thread_id = ANY(%s)"
DELETE_USER_ROWS = "DELETE FROM {} WHERE org_id = %s AND user_id = %s"
COUNT_USER_ROWS = "SELECT count(*) AS n FROM {} WHERE org_id = %s AND user_id = %s"


class ErasureIncompleteError(RuntimeError):
    """Rows remained after erasure; the transaction was rolled back."""


def forget_user(pool: ConnectionPool[Any], scope: Scope) -> dict[str, int]:
    """Delete everything `scope`'s user has, return rows deleted per table, verify none remain.
    `pool` is the worker role's (`worker_uri`): only it may pseudonymise an actor."""
    user = (scope.org_id, scope.user_id)
    deleted: dict[str, int] = {}
    with scoped(pool, Scope.for_user(*user)) as conn:
        owner = {"org": scope.org_id, "user": scope.user_id}
        threads = [r["thread_id"] for r in conn.execute(OWNED_THREAD_IDS, owner).fetchall()]
        for table in CHECKPOINT_TABLES:
            deleted[table] = _rowcount(conn, DELETE_CHECKPOINT_ROWS, table, (threads,))
        for table in USER_TABLES:
            deleted[table] = _rowcount(conn, DELETE_USER_ROWS, table, user)
        conn.execute(PSEUDONYMISE_ACTOR)
        shared = Scope.for_org(*user, permissions=frozenset({ORG_ADMIN}))  # what she wrote there
        conn.execute(SET_SCOPE, scope_settings(shared))
        deleted["facts"] += max(conn.execute(DELETE_AUTHORED_SHARED, user).rowcount, 0)
        conn.execute(SET_SCOPE, scope_settings(Scope.for_user(*user)))
        remaining = remaining_rows(conn, scope, threads)
        if any(remaining.values()):
            raise ErasureIncompleteError(f"rows remain after erasure: {remaining}")
    return deleted


def remaining_rows(conn: Connection[Any], scope: Scope, threads: list[str]) -> dict[str, int]:
    """Rows per table that still belong to the user (all zero after a successful erasure)."""
    counts = {
        table: _count(conn, COUNT_CHECKPOINT_ROWS, table, (threads,)) for table in CHECKPOINT_TABLES
    }
    for table in USER_TABLES:
        counts[table] = _count(conn, COUNT_USER_ROWS, table, (scope.org_id, scope.user_id))
    row = conn.execute(COUNT_AUTHORED_SHARED, (scope.org_id, scope.user_id)).fetchone()
    counts["facts"] += int(row["n"]) if row else 0
    return counts


def _rowcount(conn: Connection[Any], template: str, table: str, params: tuple[Any, ...]) -> int:
    cursor = conn.execute(sql.SQL(template).format(sql.Identifier(table)), params)
    return max(cursor.rowcount, 0)


def _count(conn: Connection[Any], template: str, table: str, params: tuple[Any, ...]) -> int:
    row = conn.execute(sql.SQL(template).format(sql.Identifier(table)), params).fetchone()
    return int(row["n"]) if row else 0
