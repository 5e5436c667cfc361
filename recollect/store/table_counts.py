"""Counting rows around a migration, so that none is lost without a word.

Every table that exists before and after a migration must hold at least as many rows after
(our migrations add and reshape; they never delete). A table a migration drops, and any
reshaping that changes counts, is covered by the migration's own `RowCheck`s: counts taken
before and after that must be equal. A dropped table that held rows without such a check
stops the migration too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from psycopg import Connection, sql

TABLES = """
SELECT c.oid::bigint AS oid, c.oid::regclass::text AS name FROM pg_class AS c
WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p')
"""


@dataclass(frozen=True)
class RowCheck:
    """A count that must come out of a migration as it went in."""

    what: str
    before: str
    after: str


def count_rows(conn: Connection[Any], query: str) -> int:
    """The single count a query returns."""
    row = conn.execute(query).fetchone()
    assert row is not None
    return int(next(iter(row.values())) if isinstance(row, dict) else row[0])


def table_rows(conn: Connection[Any]) -> dict[int, tuple[str, int]]:
    """Every table of the schema by oid, with its name and row count."""
    counts = {}
    for row in conn.execute(TABLES).fetchall():
        query = sql.SQL("SELECT count(*) FROM {}").format(sql.SQL(row["name"]))
        counts[int(row["oid"])] = (row["name"], count_rows(conn, query.as_string(conn)))
    return counts


def check_counts(
    conn: Connection[Any],
    checks: Sequence[RowCheck],
    declared_before: Sequence[int],
    tables_before: dict[int, tuple[str, int]],
) -> str | None:
    """What went wrong with the counts after a migration, as one phrase, or None."""
    for check, before in zip(checks, declared_before, strict=True):
        after = count_rows(conn, check.after)
        if after != before:
            return f"{check.what}: {before} rows went in and {after} came out"
    tables_after = table_rows(conn)
    for oid, (name, before) in tables_before.items():
        if oid in tables_after:
            after = tables_after[oid][1]
            if after < before:
                return f"table {name} held {before} rows and now holds {after}"
        elif before and not checks:
            return f"table {name} was dropped with {before} rows and nothing counted them"
    return None
