"""Every read or write of user data runs in a transaction that carries its tenant scope.

`set_config(..., true)` is transaction-local, so a pooled connection can never carry one
tenant's scope into another's request; row-level security policies read these settings.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from typing import Any

import psycopg
from psycopg import AsyncConnection, Connection
from psycopg.pq import TransactionStatus
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from recollect.store.scope import Scope

SET_SCOPE = """
SELECT set_config('app.org_id', %(org_id)s, true),
       set_config('app.user_id', %(user_id)s, true),
       set_config('app.session_id', %(session_id)s, true),
       set_config('app.scope_kind', %(kind)s, true),
       set_config('app.reviewer', %(reviewer)s, true),
       set_config('app.org_admin', %(org_admin)s, true)
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
    """The async twin of `scoped`, as one pipelined transaction (`one_trip`)."""
    async with pool.connection() as conn, one_trip(conn, scope_settings(scope)) as scoped_conn:
        yield scoped_conn


@asynccontextmanager
async def one_trip(
    conn: AsyncConnection[Any], settings: dict[str, str], *, first: str | None = None
) -> AsyncIterator[AsyncConnection[Any]]:
    """A scoped transaction whose BEGIN, `first` (an isolation level), scope, statements and
    COMMIT travel in one pipeline: a write costs one round trip, each read that is waited for
    one more. psycopg's `transaction()` inside a pipeline syncs where it begins and where its
    block ends, three round trips for one statement; on an event loop every round trip waits
    its turn behind other runs' callbacks. A block that only sends (and reads its cursors after
    the block) is one round trip whatever it sends. An error rolls the transaction back."""
    try:
        async with conn.pipeline():
            await conn.execute(b"BEGIN", prepare=False)
            if first is not None:
                await conn.execute(first.encode(), prepare=False)
            await conn.execute(SET_SCOPE, settings)
            yield conn
            await conn.execute(b"COMMIT", prepare=False)
    except Exception:
        if not conn.closed and conn.info.transaction_status != TransactionStatus.IDLE:
            with suppress(psycopg.Error):  # a broken connection: the pool discards it
                await conn.execute(b"ROLLBACK", prepare=False)
        raise


@contextmanager
def pipelined_scope(conn: Connection[Any], scope: Scope) -> Iterator[Connection[Any]]:
    """`scoped` for a read that sends all its statements at once, as `one_trip` does on an
    event loop: BEGIN, the scope, the reads and COMMIT travel in one pipeline and one round
    trip (psycopg's `transaction()` inside a pipeline syncs where it begins and where it ends).
    An error rolls the transaction back."""
    try:
        with conn.pipeline():
            conn.execute(b"BEGIN", prepare=False)
            conn.execute(SET_SCOPE, scope_settings(scope))
            yield conn
            conn.execute(b"COMMIT", prepare=False)
    except Exception:
        if not conn.closed and conn.info.transaction_status != TransactionStatus.IDLE:
            with suppress(psycopg.Error):  # a broken connection: the pool discards it
                conn.execute(b"ROLLBACK", prepare=False)
        raise


def scope_settings(scope: Scope) -> dict[str, str]:
    """The transaction-local settings row-level security reads."""
    return {
        "org_id": scope.org_id,
        "user_id": scope.user_id,
        "session_id": scope.session_id or "",
        "kind": scope.kind.value,
        "reviewer": "on" if scope.is_reviewer else "off",
        "org_admin": "on" if scope.is_org_admin else "off",
    }
