"""`recollect db url|status`: where the database is and what shape it is in."""

from __future__ import annotations

import argparse
from typing import Any

import psycopg

from recollect.store.migrations import migrate
from recollect.store.server import (
    CONNECTION_KWARGS,
    check_reachable,
    configured_uri,
    data_dir,
    resolve_uri,
)


def register(commands: Any) -> None:
    """Add `db url` and `db status`."""
    parser = commands.add_parser("db", help="database location and status")
    actions = parser.add_subparsers(dest="db_command", required=True)
    url = actions.add_parser("url", help="print the admin URI migrations use (last line)")
    url.set_defaults(run=run_url)
    status = actions.add_parser("status", help="server, database, schema and pgvector versions")
    status.set_defaults(run=run_status)


def run_url(_args: argparse.Namespace) -> int:
    """Print the admin URI; starts the embedded server if that is the database in use."""
    uri = resolve_uri()
    check_reachable(uri)
    print(uri)
    return 0


def run_status(_args: argparse.Namespace) -> int:
    """Migrate if needed, then report versions."""
    uri = resolve_uri()
    version = migrate(uri)
    with psycopg.connect(uri, **CONNECTION_KWARGS) as conn:
        row = conn.execute(
            "SELECT current_database() AS database, current_setting('server_version') AS server, "
            "(SELECT extversion FROM pg_extension WHERE extname = 'vector') AS pgvector"
        ).fetchone()
    assert row is not None
    where = "external (DATABASE_URI)" if configured_uri() else f"embedded in {data_dir()}"
    print(f"server: PostgreSQL {row['server']}, {where}")
    print(f"database: {row['database']}")
    print(f"schema version: {version}")
    print(f"pgvector: {row['pgvector'] or 'not installed'}")
    return 0
