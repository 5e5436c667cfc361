"""Every read or write of user data runs in a transaction that carries its tenant scope.

`set_config(..., true)` is transaction-local, so a pooled connection can never carry one
tenant's scope into another's request; row-level security policies read these settings.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from psycopg import Connection
from psycopg_pool import ConnectionPool

from recollect.state.scope import Scope

SET_SCOPE = """
SELECT set_config('app.org_id', %(org_id)s, true),
       set_config('app.user_id', %(user_id)s, true),
       set_config('app.session_id', %(session_id)s, true),
       set_config('app.scope_kind', %(kind)s, true)
"""


@contextmanager
def scoped(pool: ConnectionPool[Any], scope: Scope) -> Iterator[Connection[Any]]:
    """A connection inside one transaction, scoped to `scope` until it commits or rolls back."""
    with pool.connection() as conn, conn.transaction():
        conn.execute(
            SET_SCOPE,
            {
                "org_id": scope.org_id,
                "user_id": scope.user_id,
                "session_id": scope.session_id or "",
                "kind": scope.kind.value,
            },
        )
        yield conn
