"""The migrating owner sees every row while it migrates, and only then.

Our tables FORCE row-level security, so their owner obeys the tenant policies too, and an
owner with no scope (and no BYPASSRLS, as on managed Postgres) sees no row at all: a migration
that moves data would move nothing and say nothing. While a migration runs, the owner's tables
are un-FORCEd, inside the migration's own transaction where it has one; afterwards every table
behind row-level security is FORCEd again, so the schema always ends with all of them forced.
Only the owner is affected: the roles that serve requests own nothing and obey the policies
either way.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from psycopg import Connection, sql
from psycopg.pq import TransactionStatus

_OWN_TABLES = """
SELECT c.oid::regclass::text AS name FROM pg_class AS c
WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p')
  AND pg_has_role(current_user, c.relowner, 'USAGE')
  AND (%(only)s::text[] IS NULL OR c.relname = ANY(%(only)s::text[]))
"""
FORCED = _OWN_TABLES + "  AND c.relforcerowsecurity"
PROTECTED_NOT_FORCED = _OWN_TABLES + "  AND c.relrowsecurity AND NOT c.relforcerowsecurity"


@contextmanager
def owner_sees_every_row(
    conn: Connection[Any], only: tuple[str, ...] | None = None
) -> Iterator[None]:
    """Un-FORCE the owner's tables (or `only` those) for the block, then FORCE every
    protected table again, also when the block fails."""
    lift_force(conn, only)
    try:
        yield
    finally:
        if conn.info.transaction_status != TransactionStatus.INERROR:  # else: rolled back
            force_every_protected_table(conn)


def lift_force(conn: Connection[Any], only: tuple[str, ...] | None = None) -> None:
    """Un-FORCE the owner's forced tables (or `only` those); again after a step that forced
    a table of its own, before its rows are counted."""
    for table in _names(conn, FORCED, only):
        conn.execute(sql.SQL("ALTER TABLE {} NO FORCE ROW LEVEL SECURITY").format(table))


def force_every_protected_table(conn: Connection[Any]) -> None:
    """FORCE row-level security on every table that has it enabled."""
    for table in _names(conn, PROTECTED_NOT_FORCED, None):
        conn.execute(sql.SQL("ALTER TABLE {} FORCE ROW LEVEL SECURITY").format(table))


def _names(conn: Connection[Any], query: str, only: tuple[str, ...] | None) -> list[sql.SQL]:
    rows = conn.execute(query, {"only": list(only) if only else None}).fetchall()
    names = [row["name"] if isinstance(row, dict) else row[0] for row in rows]
    return [sql.SQL(name) for name in names]  # regclass text: quoted where it needs to be
