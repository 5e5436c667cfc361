"""Why a pool got no connection in time, asked of Postgres itself: one new connection is tried
when the wait ran out, and what the server answers decides the line. Slots all taken, a login
refused and a server that does not answer each have their own fix; a pool whose every
connection stayed in use is the only case where the pool's size is the setting to change."""

from __future__ import annotations

import psycopg
from psycopg.conninfo import conninfo_to_dict

from recollect.store.roles import login_hint, role_names

PROBE_TIMEOUT_S = 3
SLOTS_TAKEN = ("too many connections", "connection slots are reserved")
"""What Postgres says (SQLSTATE 53300) when its slots, or a role's CONNECTION LIMIT, are all in
use; libpq reports a refused connection's text only, not its SQLSTATE."""
LOGIN_REFUSED = ("password authentication failed", "no password supplied", "does not exist")
"""What it says when the login is refused (28P01, 28000) or the role is missing."""
ANSWERED = "FATAL:"
"""A refusal the server sent; without it, nothing answered (refused, timed out, no socket)."""


def probe(conninfo: str) -> psycopg.OperationalError | None:
    """Open and close one connection; what refused it, or None when the server accepts one."""
    try:
        with psycopg.connect(conninfo, connect_timeout=PROBE_TIMEOUT_S):
            return None
    except psycopg.OperationalError as exc:
        return exc


async def aprobe(conninfo: str) -> psycopg.OperationalError | None:
    """The async twin of `probe`."""
    try:
        conn = await psycopg.AsyncConnection.connect(conninfo, connect_timeout=PROBE_TIMEOUT_S)
    except psycopg.OperationalError as exc:
        return exc
    await conn.close()
    return None


def refused_line(pool: str, conninfo: str, exc: psycopg.OperationalError) -> str:
    """The one line for a connection Postgres refused: the cause, then what fixes it."""
    reason = _first_line(exc)
    params = conninfo_to_dict(conninfo)
    where = f"{params.get('host') or 'localhost'}:{params.get('port') or 5432}"
    if any(words in reason for words in SLOTS_TAKEN):
        return (
            f"Postgres at {where} has no connection slot for pool {pool!r} ({reason}): other "
            "clients hold them; raise its max_connections (or the role's CONNECTION LIMIT), "
            "lower the other clients' pools, or put a transaction pooler (PgBouncer) in front"
        )
    if any(words in reason for words in LOGIN_REFUSED):
        return f"Postgres at {where} refused the login of pool {pool!r} ({reason}): " + (
            _login_fix(str(params.get("user") or ""), reason)
        )
    if ANSWERED not in str(exc):
        return (
            f"Postgres at {where} does not answer pool {pool!r} ({reason}): start it "
            "(`recollect db start` for the embedded server) or fix the host and port of the "
            "database URI; the pool reconnects by itself once it answers"
        )
    return f"Postgres at {where} refused a connection for pool {pool!r} ({reason})"


def _login_fix(user: str, reason: str) -> str:
    names = role_names()
    kind = {names.app: "app", names.worker: "worker"}.get(user)
    hint = login_hint(kind, reason) if kind else None
    return hint or f"check the user {user!r} and the password in the database URI"


def _first_line(exc: BaseException) -> str:
    """What the server said (after libpq's `connection to server … failed: FATAL:`), or what
    libpq said when nothing answered."""
    text = str(exc).strip()
    said = text.split(ANSWERED, 1)[1] if ANSWERED in text else text
    return said.strip().splitlines()[0].strip() if said.strip() else type(exc).__name__
