"""The scope is visible to SQL inside the transaction and gone after it."""

from __future__ import annotations

from typing import Any

from psycopg_pool import ConnectionPool

from recollect.store.scope import Scope
from recollect.store.tenancy import scoped


def test_scope_is_transaction_local(pool: ConnectionPool[Any]) -> None:
    with scoped(pool, Scope.for_session("acme", "ana", "s-9")) as conn:
        row = conn.execute(
            "SELECT current_setting('app.org_id') AS o, current_setting('app.user_id') AS u, "
            "current_setting('app.session_id') AS s"
        ).fetchone()
    assert row == {"o": "acme", "u": "ana", "s": "s-9"}
    with pool.connection() as conn:
        after = conn.execute("SELECT current_setting('app.user_id', true) AS u").fetchone()
    assert after is not None
    assert after["u"] in (None, "")
