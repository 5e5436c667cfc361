"""EXPLAIN of a statement written with psycopg's named parameters, on the generic plan recall
runs it with: which index serves a read is what such a test asks."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from psycopg import ClientCursor, Connection


def sql_type(value: Any) -> str:
    """The parameter's type in a PREPARE, from the Python value it is bound to."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float8"
    if isinstance(value, datetime):
        return "timestamptz"
    if isinstance(value, str) or value is None:
        return "text"
    return "vector"


def explain_generic(
    conn: Connection[Any], statement: str, params: dict[str, Any], options: str = ""
) -> str:
    """EXPLAIN `options` of `statement` prepared on `conn` (inside its transaction) and run on
    its generic plan with `params`; "(ANALYZE, COSTS OFF, TIMING OFF)" runs it too, for the rows
    each node read and dropped."""
    names: list[str] = []

    def number(match: re.Match[str]) -> str:
        if match.group(1) not in names:
            names.append(match.group(1))
        return f"${names.index(match.group(1)) + 1}"

    numbered = re.sub(r"%\((\w+)\)s", number, statement)
    types = ", ".join(sql_type(params[name]) for name in names)
    holes = ", ".join(["%s"] * len(names))
    conn.execute("SET LOCAL plan_cache_mode = force_generic_plan")
    conn.execute(f"PREPARE explained ({types}) AS {numbered}")
    explain = f"EXPLAIN {options} EXECUTE explained({holes})"  # values inlined, no $n
    rows = ClientCursor(conn).execute(explain, [params[n] for n in names]).fetchall()
    conn.execute("DEALLOCATE explained")
    return "\n".join(next(iter(row.values())) for row in rows)
