"""What a running embedded server holds, read as rows rather than bytes.

A Postgres left running on a data folder (`recollect db start`) rewrites its own files while
idle: checkpoints, statistics, WAL. Its files say nothing about whether anyone wrote to it;
its tables do. Nothing here starts or stops a server: it reads `postmaster.pid`, which only
a live server leaves behind, and connects over the socket the file names.
"""

from __future__ import annotations

import os
from pathlib import Path

import psycopg
from psycopg import sql

PID_FILE = "postmaster.pid"
_PID, _PORT, _SOCKET_DIR = 0, 3, 4
"""Lines of `postmaster.pid`: pid, data folder, start time, port, socket folder, …"""

DATABASES = "SELECT datname FROM pg_database WHERE datallowconn AND NOT datistemplate"
TABLES = """
SELECT n.nspname AS schema, c.relname AS name
FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p')
  AND n.nspname NOT IN ('pg_catalog', 'information_schema')
  AND n.nspname NOT LIKE 'pg\\_toast%' AND n.nspname NOT LIKE 'pg\\_temp%'
ORDER BY 1, 2
"""


def running_uri(pgdata: Path) -> str | None:
    """An admin URI for the server running on `pgdata`, or None when none is."""
    try:
        lines = (pgdata / PID_FILE).read_text().splitlines()
        pid = int(lines[_PID])
        port, socket_dir = lines[_PORT].strip(), lines[_SOCKET_DIR].strip()
    except (OSError, ValueError, IndexError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None  # a stale file from a server that died
    except PermissionError:
        pass  # alive, another user's
    if not socket_dir:
        return f"postgresql://postgres@localhost:{port}/postgres"
    return f"postgresql://postgres@/postgres?host={socket_dir}&port={port}"


def rows_per_table(uri: str) -> dict[str, int]:
    """`database.schema.table` → row count, for every table of every database."""
    with psycopg.connect(uri, autocommit=True) as conn:
        names = [row[0] for row in conn.execute(DATABASES)]
    counts: dict[str, int] = {}
    for name in sorted(names):
        with psycopg.connect(uri, dbname=name, autocommit=True) as conn:
            for schema, table in conn.execute(TABLES).fetchall():
                query = sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(schema, table))
                row = conn.execute(query).fetchone()
                counts[f"{name}.{schema}.{table}"] = int(row[0]) if row else 0
    return counts
