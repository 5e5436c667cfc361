"""A real PgBouncer in transaction mode in front of the embedded test server, for tests that
check the app behind a transaction pooler.

PgBouncer listens on 127.0.0.1 (a free port) and reaches the socket-only test server through
its unix socket folder; any database name is passed through, and any role logs in as itself
without a password (the test server trusts its socket). PgBouncer refuses to run as root, so
under root it runs as the user that owns the test server's socket folder.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from tests.support.langgraph_dev import free_port

REQUIRE_ENV = "RECOLLECT_REQUIRE_PGBOUNCER"
INSTALL_HINT = "apt-get install pgbouncer"
SYSTEM_FOLDERS = ("/usr/sbin", "/usr/local/sbin")
"""Where Debian's package puts the program, often not on an ordinary user's PATH."""
START_TIMEOUT_S = 15
DEFAULT_POOL_SIZE = 20
"""Server connections per (database, role): more than the tests' clients ever hold at once,
so a test waits on locks, never on the pooler."""
CONFIG = """\
[databases]
* = host={socket_dir} port={port}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {listen_port}
unix_socket_dir =
auth_type = trust
auth_file = {folder}/users.txt
auth_user = {superuser}
pool_mode = transaction
default_pool_size = {pool_size}
max_client_conn = 500
logfile = {folder}/pgbouncer.log
pidfile = {folder}/pgbouncer.pid
"""


@dataclass(frozen=True)
class Pooler:
    """A running PgBouncer and how to reach a database through it."""

    host: str
    port: int
    version: str
    log: Path

    def uri(self, direct_uri: str) -> str:
        """`direct_uri`'s database and role, reached through the pooler instead."""
        params = conninfo_to_dict(direct_uri)
        params.update(host=self.host, port=str(self.port))
        return make_conninfo("", **params)


def pgbouncer_binary() -> str:
    """The `pgbouncer` program; skips the test when it is missing, or fails it when
    `RECOLLECT_REQUIRE_PGBOUNCER=1` says it must be there."""
    search = os.pathsep.join([os.environ.get("PATH", ""), *SYSTEM_FOLDERS])
    found = shutil.which("pgbouncer", path=search)
    if found:
        return found
    reason = f"pgbouncer is not installed ({INSTALL_HINT})"
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{reason}, and {REQUIRE_ENV}=1 requires it")
    pytest.skip(f"{reason}; set {REQUIRE_ENV}=1 to fail instead of skipping")


@contextmanager
def pgbouncer(direct_uri: str, pool_size: int = DEFAULT_POOL_SIZE) -> Iterator[Pooler]:
    """Start PgBouncer in front of the server `direct_uri` (a superuser's URI over the unix
    socket) and stop it on exit."""
    binary = pgbouncer_binary()
    params = conninfo_to_dict(direct_uri)
    socket_dir = Path(str(params["host"]))
    folder = Path(tempfile.mkdtemp(prefix="recollect-pgbouncer-"))
    run_as: list[str] = []
    if os.geteuid() == 0:  # PgBouncer will not run as root: become the socket's owner
        owner = socket_dir.stat().st_uid
        shutil.chown(folder, user=owner)
        run_as = ["-u", pwd.getpwuid(owner).pw_name]
    listen_port = free_port()
    superuser = str(params.get("user") or "postgres")
    (folder / "users.txt").write_text("".join(f'"{role}" ""\n' for role in login_roles(direct_uri)))
    (folder / "pgbouncer.ini").write_text(
        CONFIG.format(
            socket_dir=socket_dir,
            port=params.get("port") or 5432,
            listen_port=listen_port,
            folder=folder,
            superuser=superuser,
            pool_size=pool_size,
        )
    )
    version = subprocess.run(
        [binary, "--version"], capture_output=True, text=True, check=True
    ).stdout.split("\n", 1)[0]
    pooler = Pooler("127.0.0.1", listen_port, version, folder / "pgbouncer.log")
    with (folder / "stderr.log").open("w") as stderr:
        process = subprocess.Popen(
            [binary, *run_as, str(folder / "pgbouncer.ini")],
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    try:
        _wait_until_ready(process, pooler, direct_uri)
        yield pooler
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        shutil.rmtree(folder, ignore_errors=True)


def login_roles(direct_uri: str) -> list[str]:
    """Every role that may log in, for PgBouncer's user list (roles made later are looked up
    through `auth_user`)."""
    with psycopg.connect(direct_uri, autocommit=True) as conn:
        rows = conn.execute("SELECT rolname FROM pg_roles WHERE rolcanlogin ORDER BY 1").fetchall()
    return [str(row[0]) for row in rows]


def _wait_until_ready(process: subprocess.Popen[bytes], pooler: Pooler, direct_uri: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    probe = pooler.uri(direct_uri)
    while True:
        if process.poll() is not None:
            error = (pooler.log.parent / "stderr.log").read_text(errors="replace")
            raise RuntimeError(f"pgbouncer exited with {process.returncode}: {error}")
        try:
            with psycopg.connect(probe, autocommit=True, connect_timeout=2) as conn:
                conn.execute("SELECT 1")
            return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
