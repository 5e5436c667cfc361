"""The user profile: built from accepted facts, capped, versioned, and lossless under
concurrent writers from separate connections."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from recollect.extraction.fact_writer import EngineWriter
from recollect.longterm.facts import LongTermMemory
from recollect.longterm.profile import (
    ProfilePolicy,
    ProfileUpdate,
    ProfileVersionError,
    from_row,
    update_profile,
)
from recollect.longterm.records import FactCategory, NewFact, ProfileEntry
from recollect.longterm.rule_judge import RuleJudge
from recollect.store import migrations
from recollect.store.scope import Scope
from recollect.store.server import CONNECTION_KWARGS, with_database
from recollect.store.tenancy import scoped
from tests.support.db import all_rows, superuser_conninfo

SCOPE = Scope.for_user("acme", "dana")
WRITERS = 20


def _store_document(pool: ConnectionPool[Any], version: int, document: dict[str, Any]) -> None:
    """As the superuser, as an older (or newer) release would have left it."""
    with psycopg.connect(superuser_conninfo(pool), **CONNECTION_KWARGS) as conn:
        conn.execute(
            "INSERT INTO profiles (org_id, user_id, schema_version, document) "
            "VALUES (%s, %s, %s, %s)",
            (SCOPE.org_id, SCOPE.user_id, version, Jsonb(document)),
        )


def test_twenty_concurrent_updates_from_separate_connections_all_land(
    pool: ConnectionPool[Any],
) -> None:
    policy = ProfilePolicy(max_values=WRITERS)
    start = threading.Barrier(WRITERS)
    errors: list[BaseException] = []
    with ConnectionPool(
        pool.conninfo, min_size=WRITERS, max_size=WRITERS, kwargs=dict(CONNECTION_KWARGS)
    ) as many:
        many.wait()

        def write(n: int) -> None:
            try:
                with scoped(many, SCOPE) as conn:
                    conn.execute("SELECT 1")  # each writer holds its own connection first
                    start.wait()
                    update = ProfileUpdate("preferences", f"preference {n}", fact_id=f"f{n}")
                    update_profile(conn, SCOPE, [update], policy=policy)
            except BaseException as exc:  # reported below, with the thread's error
                errors.append(exc)

        threads = [threading.Thread(target=write, args=(n,)) for n in range(WRITERS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert errors == []
    profile = LongTermMemory(pool).profile(SCOPE)
    assert sorted(profile.values("preferences")) == sorted(
        f"preference {n}" for n in range(WRITERS)
    )
    assert profile.revision == WRITERS, "every write was its own revision: none overwrote another"
    print(f"\nprofile: {WRITERS} concurrent updates -> {len(profile.values('preferences'))} kept")


def test_list_fields_evict_the_oldest_and_single_fields_replace(pool: ConnectionPool[Any]) -> None:
    memory = LongTermMemory(pool, profile_policy=ProfilePolicy(max_values=3))
    with scoped(pool, SCOPE) as conn:
        for n in range(5):
            memory.update_profile_in(conn, SCOPE, [ProfileUpdate("preferences", f"likes {n}")])
        memory.update_profile_in(conn, SCOPE, [ProfileUpdate("timezone", "Europe/Paris")])
        memory.update_profile_in(conn, SCOPE, [ProfileUpdate("timezone", "America/Chicago")])
    profile = memory.profile(SCOPE)
    assert profile.values("preferences") == ["likes 2", "likes 3", "likes 4"]
    assert profile.values("timezone") == ["America/Chicago"]


def test_accepted_facts_build_the_profile_and_supersession_updates_it(
    pool: ConnectionPool[Any],
) -> None:
    memory = LongTermMemory(pool)
    writer = EngineWriter(memory)
    with scoped(pool, SCOPE) as conn:
        writer.remember(
            conn, SCOPE, NewFact(text="Name is Dana", category="biographical", subject="name")
        )
        old = writer.remember(
            conn,
            SCOPE,
            NewFact(
                text="Prefers Python",
                category=FactCategory.PREFERENCE,
                subject="favourite_language",
            ),
        )
        new = writer.remember(
            conn,
            SCOPE,
            NewFact(
                text="Prefers TypeScript",
                category=FactCategory.PREFERENCE,
                subject="favourite_language",
            ),
        )
        writer.remember(
            conn, SCOPE, NewFact(text="Email is [EMAIL]", category="biographical", subject="email")
        )
        writer.remember(conn, SCOPE, NewFact(text="Wants to learn Rust", category="goal"))
    assert old != new
    profile = memory.profile(SCOPE)
    assert profile.values("name") == ["Dana"]
    assert profile.values("preferences") == ["Prefers TypeScript"], "the superseded value left"
    assert set(profile.fields) == {"name", "preferences"}, "redacted values and goals stay out"
    recalled = memory.recall(SCOPE, "anything at all")
    assert [(p.key, p.value) for p in recalled.profile] == [
        ("name", "Dana"),
        ("preferences", "Prefers TypeScript"),
    ]


def test_an_older_version_is_migrated_on_read_and_rewritten_on_the_next_update(
    pool: ConnectionPool[Any],
) -> None:
    _store_document(pool, 1, {"name": "Dana", "role": "leads payments"})
    memory = LongTermMemory(pool)
    assert memory.profile(SCOPE).values("name") == ["Dana"]
    [row] = all_rows(pool, "SELECT schema_version FROM profiles")
    assert row["schema_version"] == 1, "reading does not write"
    memory.set_profile(SCOPE, [ProfileEntry(key="timezone", value="Europe/Berlin")])
    [row] = all_rows(pool, "SELECT schema_version, document FROM profiles")
    assert row["schema_version"] == 2
    assert memory.profile(SCOPE).values("role") == ["leads payments"]
    assert memory.profile(SCOPE).values("timezone") == ["Europe/Berlin"]


def test_an_unknown_future_version_fails_loudly_and_is_not_overwritten(
    pool: ConnectionPool[Any],
) -> None:
    _store_document(pool, 9, {"fields": {"name": [{"value": "Dana"}]}, "new_thing": True})
    memory = LongTermMemory(pool)
    with pytest.raises(ProfileVersionError, match=r"schema_version 9.*upgrade recollect"):
        memory.profile(SCOPE)
    with pytest.raises(ProfileVersionError, match="schema_version 9"):
        memory.set_profile(SCOPE, [ProfileEntry(key="name", value="Ana")])
    [row] = all_rows(pool, "SELECT schema_version, document FROM profiles")
    assert row["schema_version"] == 9
    assert row["document"]["new_thing"] is True


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("Bad Field!", "x", "lower_snake_case"),
        ("name", "   ", "non-empty"),
        ("notes", "x" * 501, "exceeds 500"),
    ],
)
def test_bad_profile_updates_are_refused_clearly(field: str, value: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ProfileUpdate(field, value)


def test_the_migration_carries_key_value_profiles_over_as_version_1(postgres_server: str) -> None:
    name = "profile_migration_check"
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        with psycopg.connect(with_database(postgres_server, name), **CONNECTION_KWARGS) as conn:
            conn.execute(migrations.CREATE_MIGRATIONS_TABLE)
            before = [m for m in migrations.MIGRATIONS if m.name.startswith("long-term memory")]
            for migration in migrations.MIGRATIONS[: before[0].version]:
                with conn.transaction():
                    conn.execute(migration.sql, prepare=False)
                    conn.execute(
                        "INSERT INTO recollect_migrations (version, name) VALUES (%s, %s)",
                        (migration.version, migration.name),
                    )
            conn.execute(
                "INSERT INTO profiles (org_id, user_id, key, value) VALUES "
                "('acme', 'dana', 'name', 'Dana'), ('acme', 'dana', 'role', 'leads payments')"
            )
            migrations.setup(conn)
            row = conn.execute("SELECT * FROM profiles").fetchone()
        assert row is not None
        assert row["schema_version"] == 1
        profile = from_row(row)
        assert profile.values("name") == ["Dana"]
        assert profile.values("role") == ["leads payments"]
    finally:
        with psycopg.connect(postgres_server, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_the_profile_follows_the_inferred_subject_flips_and_answers_as_of(
    pool: ConnectionPool[Any],
) -> None:
    memory = LongTermMemory(pool, judge=RuleJudge())
    writer = EngineWriter(memory)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)

    def said(text: str, category: FactCategory, day: int) -> None:
        fact = NewFact(text=text, category=category, learned_at=t0 + timedelta(days=day))
        with scoped(pool, SCOPE) as conn:
            writer.remember(conn, SCOPE, fact)

    said("Lives in Stockholm", FactCategory.BIOGRAPHICAL, 0)
    said("Prefers dark mode in every editor", FactCategory.PREFERENCE, 1)
    said("Next month moving to Oslo", FactCategory.BIOGRAPHICAL, 10)
    waiting = memory.profile(SCOPE, now=t0 + timedelta(days=15))
    assert waiting.values("location") == ["Lives in Stockholm"], "a plan waits for its day"
    assert memory.profile(SCOPE).values("location") == ["Next month moving to Oslo"], "it came"
    said("Now prefers light mode", FactCategory.PREFERENCE, 20)
    assert memory.profile(SCOPE).values("preferences") == ["Now prefers light mode"]

    then = memory.recall(SCOPE, "display settings", as_of=t0 + timedelta(days=5))
    assert ("preferences", "Prefers dark mode in every editor") in [
        (p.key, p.value) for p in then.profile
    ]
    now = memory.recall(SCOPE, "display settings")
    assert ("preferences", "Now prefers light mode") in [(p.key, p.value) for p in now.profile]
