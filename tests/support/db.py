"""Looking under row-level security in tests: what is really stored, whoever owns it."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.conninfo import make_conninfo
from psycopg_pool import ConnectionPool

from recollect.store.scope import Scope
from recollect.store.server import CONNECTION_KWARGS

TEST_SERVER_SUPERUSER = "postgres"


def superuser_conninfo(pool: ConnectionPool[Any]) -> str:
    """The pool's database, as the embedded test server's superuser (RLS does not apply)."""
    return make_conninfo(pool.conninfo, user=TEST_SERVER_SUPERUSER)


def all_rows(pool: ConnectionPool[Any], sql: str, *params: Any) -> list[dict[str, Any]]:
    """Every row a query returns, across all tenants."""
    with psycopg.connect(superuser_conninfo(pool), **CONNECTION_KWARGS) as conn:
        return list(conn.execute(sql, params).fetchall())


DEFAULT_SCOPE = Scope.for_user("default", "local-user")
"""Whom a `Context()` names when the environment names nobody (the tests clear it)."""
