"""Keeping a transaction that waits on other work from being ended as idle.

A transaction left open while its owner does something else (holding a transaction-level lock
for the length of a decision) is "idle in transaction" to the server, and managed Postgres
often ends such sessions after `idle_in_transaction_session_timeout`; a transaction pooler may
have an idle limit of its own. `kept_alive` sends a trivial statement on the connection well
inside either limit, so the transaction, and its lock, last as long as the work does. A
process that dies takes its connection, and so the transaction, with it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import Connection
from psycopg.rows import tuple_row

IDLE_TIMEOUT = (
    "SELECT setting::bigint AS ms FROM pg_settings "
    "WHERE name = 'idle_in_transaction_session_timeout'"
)
KEEPALIVE = "SELECT 1"
"""Both sent without parameters, so as simple queries: no portal or snapshot outlives them."""
MAX_PERIOD_S = 20.0
"""The longest gap between statements, whatever the server allows: inside a pooler's own
idle-transaction limit (PgBouncer's is off by default; when set it is rarely under a minute)."""


def keepalive_period(idle_timeout_ms: int) -> float:
    """A third of the server's idle limit (0 means none), never more than `MAX_PERIOD_S`."""
    if idle_timeout_ms <= 0:
        return MAX_PERIOD_S
    return min(idle_timeout_ms / 3000.0, MAX_PERIOD_S)


@contextmanager
def kept_alive(conn: Connection[Any]) -> Iterator[None]:
    """Send `KEEPALIVE` on `conn` (inside its open transaction) from a background thread until
    the block exits. A connection that broke stops the thread; the transaction's end reports it."""
    with conn.cursor(row_factory=tuple_row) as cur:
        row = cur.execute(IDLE_TIMEOUT, prepare=False).fetchone()
    period = keepalive_period(int(row[0]) if row else 0)
    done = threading.Event()

    def beat() -> None:
        while not done.wait(period):
            try:
                conn.execute(KEEPALIVE, prepare=False)
            except psycopg.Error:
                return

    thread = threading.Thread(target=beat, name="recollect-keepalive", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
