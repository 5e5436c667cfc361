"""A user's code centre written as the user, without the 20,000 facts that make the engine
record one: for tests of the tables a user's data lives in."""

from __future__ import annotations

from typing import Any

from psycopg_pool import ConnectionPool

from recollect.longterm.vectors import literal
from recollect.store.scope import Scope
from recollect.store.tenancy import scoped

RECORD_CENTRE = """
INSERT INTO code_centres (org_id, user_id, embedding_dim, centre, facts)
VALUES (%s, %s, %s, %s::vector, 1)
"""


def record_centre(pool: ConnectionPool[Any], scope: Scope, centre: list[float]) -> None:
    """Record `centre` as the scope owner's code centre for its width."""
    with scoped(pool, scope) as conn:
        conn.execute(RECORD_CENTRE, (scope.org_id, scope.user_id, len(centre), literal(centre)))
