"""Hand out a pooled connection only if it is alive, without a round trip when it clearly is.

The pools check a connection when they hand it out, so one a Postgres restart killed is
replaced instead of failing the query that uses it. psycopg_pool's own check sends an empty
query: one round trip for every checkout, which on the served API is several per turn. An
idle connection has nothing to read, though; when the server ends it (a restart, an idle
timeout, a crash) its goodbye or the closed socket makes it readable. So a quiet socket is
trusted as is, and only a readable one pays for the full check.
"""

from __future__ import annotations

import select
from typing import Any

from psycopg import AsyncConnection, Connection
from psycopg_pool import AsyncConnectionPool, ConnectionPool


def quiet(conn: Connection[Any] | AsyncConnection[Any]) -> bool:
    """True when the connection is open and the server has sent nothing since its last reply."""
    if conn.closed or conn.broken:
        return False
    poller = select.poll()
    poller.register(conn.pgconn.socket, select.POLLIN | select.POLLPRI)
    return not poller.poll(0)


def check_connection(conn: Connection[Any]) -> None:
    """The sync pools' `check`: raises when the connection is dead, so the pool replaces it."""
    if not quiet(conn):
        ConnectionPool.check_connection(conn)


async def acheck_connection(conn: AsyncConnection[Any]) -> None:
    """The async pools' `check`, the same test."""
    if not quiet(conn):
        await AsyncConnectionPool.check_connection(conn)
