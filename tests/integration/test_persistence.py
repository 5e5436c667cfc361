"""Migrations and checkpoints against a real Postgres."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit

import psycopg
import pytest

from recollect.history.persistence import open_persistence
from recollect.store import migrations
from recollect.store.errors import DatabaseUnavailableError
from recollect.store.migrations import migrate
from recollect.store.server import CONNECTION_KWARGS, check_reachable


def test_setup_is_idempotent_and_records_every_migration(database_uri: str) -> None:
    first = migrate(database_uri)
    second = migrate(database_uri)
    assert first == second == migrations.MIGRATIONS[-1].version
    with psycopg.connect(database_uri, **CONNECTION_KWARGS) as conn:
        rows = conn.execute("SELECT version FROM recollect_migrations ORDER BY version").fetchall()
        tables = {
            r["tablename"]
            for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        }
    assert [r["version"] for r in rows] == [m.version for m in migrations.MIGRATIONS]
    assert {"checkpoints", "checkpoint_blobs", "checkpoint_writes"} <= tables


def test_concurrent_setup_from_many_processes_does_not_race(postgres_server: str) -> None:
    from recollect.store.server import with_database

    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute('DROP DATABASE IF EXISTS "race"')
        conn.execute('CREATE DATABASE "race"')
    uri = with_database(postgres_server, "race")
    with ThreadPoolExecutor(max_workers=4) as executor:
        versions = list(executor.map(lambda _: migrate(uri), range(4)))
    assert versions == [migrations.MIGRATIONS[-1].version] * 4


def test_unreachable_database_raises_one_clear_error() -> None:
    uri = "postgresql://nobody:secret@127.0.0.1:1/nothing"
    with pytest.raises(DatabaseUnavailableError) as caught:
        check_reachable(uri)
    message = str(caught.value)
    assert "127.0.0.1:1" in message
    assert "secret" not in message
    assert "DATABASE_URI" in message


def test_open_persistence_uses_the_configured_database(
    database_uri: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DATABASE_URI", database_uri)
    with open_persistence(announce=False) as persistence:
        row: Any = persistence.pool.getconn()
        try:
            name = row.execute("SELECT current_database() AS d").fetchone()["d"]
        finally:
            persistence.pool.putconn(row)
    assert urlsplit(database_uri).path == f"/{name}"
    assert persistence.schema_version == migrations.MIGRATIONS[-1].version
