"""The CLI on Postgres as a deployment gets it: 16 or 18, the database's owner has CREATEROLE
and no superuser (or not even CREATEROLE), and pgvector was created by the provider's admin.

Migrating, chatting, the worker and `memory show` all work, no output or server log line is
a traceback or a "permission denied", and no role the application made can bypass row-level
security. Without CREATEROLE the first migrate says, in one line, who must create the roles;
the SQL `recollect db roles-sql` prints is enough. Two deployments with their own role
prefix share one cluster.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg.conninfo import make_conninfo

from recollect.cli.main import EXIT_FAILURE
from recollect.store.budget import POOL_SIZE_ENV, BudgetedPool
from recollect.store.errors import DatabaseRefusedError
from recollect.store.migrations import latest_version
from recollect.store.roles import app_uri
from recollect.store.server import with_database
from tests.support import clusters
from tests.support.processes import Interactive, run_recollect

FORBIDDEN = ("Traceback", "permission denied")
PRIVILEGED_ROLES = (
    "SELECT rolname FROM pg_roles WHERE (rolsuper OR rolbypassrls) AND rolname <> 'postgres'"
)


@pytest.fixture(params=clusters.SUPPORTED_VERSIONS, ids=lambda v: f"postgres{v}")
def fresh_cluster(request: pytest.FixtureRequest) -> Iterator[tuple[str, Path]]:
    """(superuser URI, server log) of a new cluster of each version the wheel ships, where
    every role but the superuser logs in with a password."""
    root = Path(tempfile.mkdtemp(prefix="recollect-owned-"))
    server = clusters.start_cluster(root, request.param)
    clusters.require_passwords(server.get_uri(), root / "pgdata")
    yield server.get_uri(), root / "pgdata" / "log"
    server.cleanup()


def _said(*results: Any) -> str:
    return "\n".join(f"{r.stdout}\n{r.stderr}" for r in results)


def test_migrate_chat_worker_and_show_as_an_owner_without_superuser(
    fresh_cluster: tuple[str, Path],
) -> None:
    admin, log = fresh_cluster
    owner = clusters.owned_database(admin, "app", "app_owner", password="owner-secret")
    env = {
        "DATABASE_URI": owner,
        "RECOLLECT_APP_PASSWORD": "app-secret",
        "RECOLLECT_WORKER_PASSWORD": "worker-secret",
        "RECOLLECT_EXTRACT_AFTER_IDLE_S": "600",
    }

    migrated = run_recollect("db", "migrate", env=env)
    assert migrated.returncode == 0, _said(migrated)
    chat = Interactive("chat", "--user", "ana", "--thread", "ana-owned", env=env)
    chat.expect("thread: ana-owned")
    chat.send("I prefer Go, my email is ana@example.com")
    chat.expect("assistant>")
    assert chat.close() == 0
    worker = run_recollect("worker", "--once", env=env)
    shown = run_recollect("memory", "show", "--user", "ana", env=env)
    status = run_recollect("db", "status", env=env)

    assert worker.returncode == 0, _said(worker)
    assert shown.returncode == 0, _said(shown)
    assert "Prefers Go" in shown.stdout
    assert f"schema version: {latest_version()} of {latest_version()}" in status.stdout
    everything = _said(migrated, worker, shown, status) + "\n".join(chat.transcript)
    everything += log.read_text(errors="replace") if log.exists() else ""
    assert not [word for word in FORBIDDEN if word in everything], everything[-3000:]
    assert "embedded Postgres" not in everything
    with psycopg.connect(with_database(admin, "app"), autocommit=True) as conn:
        assert conn.execute(PRIVILEGED_ROLES).fetchall() == []
        stored = conn.execute("SELECT count(*) FROM facts WHERE user_id = 'ana'").fetchone()
        assert stored is not None
        assert stored[0] > 0


def test_a_pool_refused_its_password_says_so_and_names_the_setting(
    fresh_cluster: tuple[str, Path],
) -> None:
    admin, _ = fresh_cluster
    owner = clusters.owned_database(admin, "app", "app_owner", password="owner-secret")
    env = {"DATABASE_URI": owner, "RECOLLECT_APP_PASSWORD": "app-secret"}
    assert run_recollect("db", "migrate", env=env).returncode == 0
    wrong = make_conninfo(app_uri(owner), password="not-the-password")
    pool = BudgetedPool(
        wrong, size_variable=POOL_SIZE_ENV, min_size=0, max_size=1, name="app", open=False
    )
    pool.open(wait=False)
    try:
        with pytest.raises(DatabaseRefusedError) as refused:
            pool.getconn(timeout=0.5)
    finally:
        pool.close()
    line = str(refused.value)
    assert "refused the login of pool 'app'" in line
    assert "password authentication failed" in line
    assert "set RECOLLECT_APP_PASSWORD to its password" in line
    print(line)


def test_without_createrole_a_dba_runs_the_printed_sql_once(postgres_server: str) -> None:
    prefix = f"solo{os.getpid()}"
    name = f"solo_{os.getpid()}"
    owner = clusters.owned_database(postgres_server, name, f"{prefix}_owner", create_roles=False)
    env = {"DATABASE_URI": owner, "RECOLLECT_ROLE_PREFIX": prefix}

    unmigrated = run_recollect("db", "status", env=env)
    assert unmigrated.returncode == 0, _said(unmigrated)
    assert f"schema version: 0 of {latest_version()} (run `recollect db migrate`)" in (
        unmigrated.stdout
    )
    refused = run_recollect("db", "migrate", env=env)
    assert refused.returncode == EXIT_FAILURE
    assert refused.stderr.count("\n") == 1, refused.stderr
    assert f"role {prefix}_definer does not exist" in refused.stderr
    assert "recollect db roles-sql" in refused.stderr

    printed = run_recollect("db", "roles-sql", env=env)
    assert printed.returncode == 0, _said(printed)
    with psycopg.connect(postgres_server, autocommit=True) as dba:
        dba.execute(printed.stdout)

    migrated = run_recollect("db", "migrate", env=env)
    assert migrated.returncode == 0, _said(migrated)
    assert migrated.stdout.strip() == f"schema version: {latest_version()}"
    shown = run_recollect("memory", "show", "--user", "ana", env=env)
    assert shown.returncode == 0, _said(shown)
    said = _said(unmigrated, refused, printed, migrated, shown)
    assert "embedded Postgres" not in said
    assert not [w for w in FORBIDDEN if w in said]
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        assert conn.execute(PRIVILEGED_ROLES).fetchall() == []


def test_two_deployments_with_their_own_prefix_share_a_cluster(postgres_server: str) -> None:
    deployments = {}
    for side in ("alpha", "beta"):
        prefix = f"{side}{os.getpid()}"
        owner = clusters.owned_database(postgres_server, prefix, f"{prefix}_owner")
        env = {"DATABASE_URI": owner, "RECOLLECT_ROLE_PREFIX": prefix}
        migrated = run_recollect("db", "migrate", env=env)
        assert migrated.returncode == 0, _said(migrated)
        deployments[side] = (prefix, owner)

    alpha_prefix, _ = deployments["alpha"]
    beta_prefix, beta_owner = deployments["beta"]
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        roles = {r[0] for r in conn.execute("SELECT rolname FROM pg_roles").fetchall()}
        members = conn.execute(
            "SELECT pg_has_role(%s, %s, 'MEMBER')", (f"{beta_prefix}_worker", f"{alpha_prefix}_app")
        ).fetchone()
    for prefix in (alpha_prefix, beta_prefix):
        assert {f"{prefix}_app", f"{prefix}_worker", f"{prefix}_definer"} <= roles
    assert members is not None
    assert members[0] is False
    alpha_in_beta = make_conninfo(beta_owner, user=f"{alpha_prefix}_app")
    with (
        psycopg.connect(alpha_in_beta, autocommit=True) as conn,
        pytest.raises(psycopg.errors.InsufficientPrivilege),
    ):
        conn.execute("SELECT count(*) FROM facts")


def test_a_role_that_cannot_log_in_is_named_with_the_variable_to_set(
    fresh_cluster: tuple[str, Path],
) -> None:
    admin, _ = fresh_cluster
    owner = clusters.owned_database(admin, "app", "app_owner", password="owner-secret")
    passwords = {"RECOLLECT_APP_PASSWORD": "app-secret", "RECOLLECT_WORKER_PASSWORD": "w-secret"}
    assert run_recollect("db", "migrate", env={"DATABASE_URI": owner, **passwords}).returncode == 0

    for missing, command in (
        ("RECOLLECT_APP_PASSWORD", ("memory", "show", "--user", "ana")),
        ("RECOLLECT_WORKER_PASSWORD", ("worker", "--once")),
    ):
        env = {"DATABASE_URI": owner, **passwords, missing: ""}
        refused = run_recollect(*command, env=env)
        assert refused.returncode == EXIT_FAILURE, _said(refused)
        assert refused.stderr.count("\n") == 1, refused.stderr
        assert f"set {missing}" in refused.stderr
        assert "owner-secret" not in refused.stderr
