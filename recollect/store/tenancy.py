"""Every read or write of user data runs in a transaction that carries its tenant scope.

`set_config(..., true)` is transaction-local, so a pooled connection can never carry one
tenant's scope into another's request; row-level security policies read these settings.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from psycopg import AsyncConnection, Connection
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from recollect.store.scope import Scope

SET_SCOPE = """
SELECT set_config('app.org_id', %(org_id)s, true),
       set_config('app.user_id', %(user_id)s, true),
       set_config('app.session_id', %(session_id)s, true),
       set_config('app.scope_kind', %(kind)s, true),
       set_config('app.reviewer', %(reviewer)s, true)
"""


@contextmanager
def scoped(pool: ConnectionPool[Any], scope: Scope) -> Iterator[Connection[Any]]:
    """A connection inside one transaction, scoped to `scope` until it commits or rolls back."""
    with pool.connection() as conn, conn.transaction():
        conn.execute(SET_SCOPE, scope_settings(scope))
        yield conn


@asynccontextmanager
async def ascoped(
    pool: AsyncConnectionPool[Any], scope: Scope
) -> AsyncIterator[AsyncConnection[Any]]:
    """The async twin of `scoped`, pipelined: BEGIN and the scope travel with the first
    statement, and COMMIT goes alone, so a one-statement transaction costs two round trips
    instead of four (on an event loop every round trip waits its turn behind other runs)."""
    async with pool.connection() as conn, conn.pipeline(), conn.transaction():
        await conn.execute(SET_SCOPE, scope_settings(scope))
        yield conn


@contextmanager
def pipelined_scope(conn: Connection[Any], scope: Scope) -> Iterator[Connection[Any]]:
    """`scoped` for a read that sends all its statements at once: BEGIN, the scope, the reads
    and COMMIT travel in one pipeline, two round trips in all instead of one per statement."""
    with conn.pipeline(), conn.transaction():
        conn.execute(SET_SCOPE, scope_settings(scope))
        yield conn


@asynccontextmanager
async def apipelined_scope(
    conn: AsyncConnection[Any], scope: Scope
) -> AsyncIterator[AsyncConnection[Any]]:
    """The async twin of `pipelined_scope`."""
    async with conn.pipeline(), conn.transaction():
        await conn.execute(SET_SCOPE, scope_settings(scope))
        yield conn


def scope_settings(scope: Scope) -> dict[str, str]:
    """The transaction-local settings row-level security reads."""
    return {
        "org_id": scope.org_id,
        "user_id": scope.user_id,
        "session_id": scope.session_id or "",
        "kind": scope.kind.value,
        "reviewer": "on" if scope.is_reviewer else "off",
    }
