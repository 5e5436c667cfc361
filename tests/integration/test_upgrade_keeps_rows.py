"""An upgrade as a managed database's owner loses no row.

A database is left at version 8 (the schema before the first migration that moves data), its
tables hold rows of three tenants, and it is upgraded to the latest version by its owner: a
role with CREATEROLE but no superuser and no BYPASSRLS, bound by row-level security like
everyone else. Every row is still there afterwards, reshaped where a migration reshapes it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from recollect.store import migrations
from recollect.store.errors import MigrationError
from recollect.store.roles import role_names
from recollect.store.server import CONNECTION_KWARGS, with_database
from tests.support import clusters

OLD_VERSION = 8
TENANTS = (("acme", "ana"), ("acme", "ben"), ("globex", "cy"))
KEYS_PER_PROFILE = 3
PER_TENANT_TABLES = (
    "threads",
    "memory_jobs",
    "memory_job_messages",
    "fact_candidates",
    "approval_workflows",
    "approval_audit",
    "refunds",
    "facts",
    "episodes",
    "checkpoints",
    "checkpoint_blobs",
    "checkpoint_writes",
)


@pytest.fixture
def old_database(postgres_server: str) -> Iterator[tuple[str, str]]:
    """(owner URI, superuser URI) of a database left at `OLD_VERSION` with rows in every
    table for three tenants, written as they were before row-level security bound anyone."""
    name = f"upgrade_{id(object())}"
    owner = clusters.owned_database(postgres_server, name, clusters.MIGRATING_OWNER)
    admin = with_database(postgres_server, name)
    with psycopg.connect(owner, **CONNECTION_KWARGS) as conn:
        assert migrations.setup(conn, up_to=OLD_VERSION) == OLD_VERSION
    with psycopg.connect(admin, **CONNECTION_KWARGS) as conn:
        for number, (org, user) in enumerate(TENANTS):
            _write_old_rows(conn, number, org, user)
    yield owner, admin
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _write_old_rows(conn: psycopg.Connection[Any], n: int, org: str, user: str) -> None:
    thread = f"{user}-thread"
    conn.execute(
        "INSERT INTO threads (thread_id, org_id, user_id) VALUES (%s, %s, %s)",
        (thread, org, user),
    )
    job = conn.execute(
        "INSERT INTO memory_jobs (org_id, user_id, thread_id) VALUES (%s, %s, %s) RETURNING id",
        (org, user, thread),
    ).fetchone()
    assert job is not None
    conn.execute(
        "INSERT INTO memory_job_messages (org_id, user_id, thread_id, message_id, role, content)"
        " VALUES (%s, %s, %s, %s, 'user', 'I moved to Oslo')",
        (org, user, thread, f"m{n}"),
    )
    conn.execute(
        "INSERT INTO fact_candidates (org_id, user_id, thread_id, job_id, text, category, "
        "confidence, status, dedup_key) VALUES (%s, %s, %s, %s, 'Lives in Oslo', 'fact', 0.9, "
        "'stored', %s)",
        (org, user, thread, job["id"], f"k{n}"),
    )
    workflow = f"wf-{user}"
    conn.execute(
        "INSERT INTO approval_workflows (id, thread_id, org_id, user_id, kind, state, request, "
        "decision, decided_by, decided_at, created_at, updated_at) VALUES (%s, %s, %s, %s, "
        "'refund', 'completed', %s, 'approve', 'rita', now(), now(), now())",
        (workflow, f"{workflow}-thread", org, user, json.dumps({"order_id": f"a-{n}"})),
    )
    conn.execute(
        "INSERT INTO approval_audit (workflow_id, transition, org_id, user_id, to_state, actor, "
        "at) VALUES (%s, 'approve', %s, %s, 'approved', 'rita', now())",
        (workflow, org, user),
    )
    conn.execute(
        "INSERT INTO refunds (workflow_id, org_id, user_id, order_id, amount, currency, reason, "
        "approved_by, executed_at) VALUES (%s, %s, %s, %s, 10, 'EUR', 'late', 'rita', now())",
        (workflow, org, user, f"A-{n}"),
    )
    old = conn.execute(
        "INSERT INTO facts (org_id, user_id, category, subject, text, confidence) "
        "VALUES (%s, %s, 'fact', 'home', 'Lives in Stockholm', 0.9) RETURNING id",
        (org, user),
    ).fetchone()
    new = conn.execute(
        "INSERT INTO facts (org_id, user_id, category, subject, text, confidence) "
        "VALUES (%s, %s, 'fact', 'home', 'Lives in Oslo', 0.9) RETURNING id",
        (org, user),
    ).fetchone()
    assert old is not None
    assert new is not None
    conn.execute(
        "UPDATE facts SET superseded_by = %s, superseded_at = now() WHERE id = %s",
        (new["id"], old["id"]),
    )
    conn.execute(
        "INSERT INTO episodes (org_id, user_id, summary) VALUES (%s, %s, 'Talked about Oslo')",
        (org, user),
    )
    for key in range(KEYS_PER_PROFILE):
        conn.execute(
            "INSERT INTO profiles (org_id, user_id, key, value) VALUES (%s, %s, %s, %s)",
            (org, user, f"key{key}", f"value {key}"),
        )
    conn.execute(
        "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, checkpoint, metadata) "
        "VALUES (%s, '', 'c1', '{}', '{}')",
        (thread,),
    )
    conn.execute(
        "INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type) "
        "VALUES (%s, '', 'messages', '1', 'empty')",
        (thread,),
    )
    conn.execute(
        "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, "
        "channel, type, blob) VALUES (%s, '', 'c1', 't1', 0, 'messages', 'empty', '')",
        (thread,),
    )


def _per_tenant(conn: psycopg.Connection[Any], table: str) -> dict[str, int]:
    owner = "thread_id" if table.startswith("checkpoint") else "org_id || '/' || user_id"
    rows = conn.execute(f"SELECT {owner} AS who, count(*) AS n FROM {table} GROUP BY 1")
    return {row["who"]: row["n"] for row in rows.fetchall()}


def _all_counts(conn: psycopg.Connection[Any]) -> dict[str, dict[str, int]]:
    return {table: _per_tenant(conn, table) for table in PER_TENANT_TABLES}


def test_an_upgrade_by_a_non_superuser_owner_keeps_every_row(
    old_database: tuple[str, str],
) -> None:
    owner, admin = old_database
    with psycopg.connect(admin, **CONNECTION_KWARGS) as conn:
        before = _all_counts(conn)
        profile_rows = _per_tenant(conn, "profiles")
    assert all(len(counts) == len(TENANTS) for counts in before.values()), before
    assert set(profile_rows.values()) == {KEYS_PER_PROFILE}

    with psycopg.connect(owner, **CONNECTION_KWARGS) as conn:
        assert not conn.execute(
            "SELECT rolsuper OR rolbypassrls AS privileged FROM pg_roles "
            "WHERE rolname = current_user"
        ).fetchone()["privileged"]
        assert migrations.setup(conn) == migrations.latest_version()

    with psycopg.connect(admin, **CONNECTION_KWARGS) as conn:
        assert _all_counts(conn) == before
        documents = conn.execute("SELECT org_id, user_id, document FROM profiles").fetchall()
        assert sorted((d["org_id"], d["user_id"]) for d in documents) == sorted(TENANTS)
        assert all(len(d["document"]) == KEYS_PER_PROFILE for d in documents)
        facts = conn.execute("SELECT user_id, author_id, valid_to, superseded_by FROM facts")
        rows = facts.fetchall()
        assert all(row["author_id"] == row["user_id"] for row in rows)
        assert all((row["valid_to"] is None) == (row["superseded_by"] is None) for row in rows)
        unforced = conn.execute(
            "SELECT relname FROM pg_class WHERE relnamespace = 'public'::regnamespace "
            "AND relrowsecurity AND NOT relforcerowsecurity"
        ).fetchall()
        assert unforced == []


def test_a_migration_that_would_lose_rows_stops_with_one_line_and_applies_nothing(
    old_database: tuple[str, str],
) -> None:
    owner, admin = old_database
    losing = migrations.Migration(OLD_VERSION + 1, "drops facts", "DELETE FROM facts")
    with (
        psycopg.connect(owner, **CONNECTION_KWARGS) as conn,
        pytest.raises(MigrationError) as caught,
    ):
        migrations._apply(conn, losing, role_names())
    message = str(caught.value)
    assert "\n" not in message
    assert "table facts held 6 rows and now holds 0" in message
    with psycopg.connect(admin, **CONNECTION_KWARGS) as conn:
        assert sum(_per_tenant(conn, "facts").values()) == 2 * len(TENANTS)
        version = conn.execute("SELECT max(version) AS v FROM recollect_migrations").fetchone()
        assert version["v"] == OLD_VERSION
