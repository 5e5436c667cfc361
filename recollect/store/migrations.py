"""Schema changes as an append-only list, applied once each, in order, by `setup()`.

Never edit or reorder a released migration: add a new one. Each runs in its own transaction and
is recorded in `recollect_migrations`; an advisory lock keeps concurrent starts from racing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import psycopg
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg import Connection

from recollect.store.roles import ensure_app_role
from recollect.store.schema.long_term import LONG_TERM_MEMORY_SQL
from recollect.store.schema.memory_jobs import PROTECT_MEMORY_JOBS_SQL
from recollect.store.schema.org_facts import ORG_SHARED_FACTS_SQL
from recollect.store.server import CONNECTION_KWARGS, check_reachable

MIGRATION_LOCK_KEY = 0x5245_434F  # "RECO": one lock id for every process migrating this database
LOCK_TIMEOUT_S = 120

CREATE_MIGRATIONS_TABLE = """
CREATE TABLE IF NOT EXISTS recollect_migrations (
    version integer PRIMARY KEY,
    name text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
)
"""


@dataclass(frozen=True)
class Migration:
    """One schema step; versions strictly increase along `MIGRATIONS` (gaps allowed)."""

    version: int
    name: str
    sql: str


PROTECT_FUNCTION = """
CREATE OR REPLACE FUNCTION recollect_protect(target regclass) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    -- Owners and superusers bypass RLS; FORCE makes the owner obey it too.
    EXECUTE format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', target);
    EXECUTE format('ALTER TABLE %s FORCE ROW LEVEL SECURITY', target);
    EXECUTE format('DROP POLICY IF EXISTS tenant_isolation ON %s', target);
    EXECUTE format(
        'CREATE POLICY tenant_isolation ON %s '
        'USING (org_id = current_setting(''app.org_id'', true) '
        '   AND user_id = current_setting(''app.user_id'', true)) '
        'WITH CHECK (org_id = current_setting(''app.org_id'', true) '
        '   AND user_id = current_setting(''app.user_id'', true))',
        target);
END
$$
"""
"""`SELECT recollect_protect('t')` puts table t behind per-user row-level security."""

THREADS = """
CREATE TABLE threads (
    thread_id text PRIMARY KEY,
    org_id text NOT NULL,
    user_id text NOT NULL,
    kind text NOT NULL DEFAULT 'agent',
    created_at timestamptz NOT NULL DEFAULT now(),
    last_active_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX threads_owner ON threads (org_id, user_id);
SELECT recollect_protect('threads');
"""


CREATE_EXTRACTION_QUEUE = """
CREATE TABLE memory_jobs (
    id bigserial PRIMARY KEY,
    org_id text NOT NULL,
    user_id text NOT NULL,
    session_id text,
    thread_id text NOT NULL,
    status text NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'running', 'done', 'dead', 'superseded')),
    turns integer NOT NULL DEFAULT 1,
    model text NOT NULL DEFAULT '',
    min_confidence real NOT NULL DEFAULT 0.7,
    run_after timestamptz NOT NULL DEFAULT now(),
    attempts integer NOT NULL DEFAULT 0,
    lease_until timestamptz,
    claim_token uuid,
    last_error text,
    facts_found integer,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz
);
CREATE UNIQUE INDEX memory_jobs_one_pending_per_thread
    ON memory_jobs (org_id, user_id, thread_id) WHERE status = 'pending';
CREATE INDEX memory_jobs_due ON memory_jobs (run_after) WHERE status IN ('pending', 'running');
CREATE INDEX memory_jobs_thread ON memory_jobs (org_id, user_id, thread_id, status);

CREATE TABLE memory_job_messages (
    org_id text NOT NULL,
    user_id text NOT NULL,
    session_id text,
    thread_id text NOT NULL,
    message_id text NOT NULL,
    seq bigserial,
    role text NOT NULL,
    content text,
    queued_at timestamptz NOT NULL DEFAULT now(),
    extracted_at timestamptz,
    PRIMARY KEY (org_id, user_id, thread_id, message_id)
);
CREATE INDEX memory_job_messages_pending
    ON memory_job_messages (org_id, user_id, thread_id, seq) WHERE extracted_at IS NULL;

CREATE TABLE fact_candidates (
    id bigserial PRIMARY KEY,
    org_id text NOT NULL,
    user_id text NOT NULL,
    session_id text,
    thread_id text,
    job_id bigint REFERENCES memory_jobs (id) ON DELETE SET NULL,
    text text NOT NULL,
    category text NOT NULL,
    subject text,
    confidence real NOT NULL CHECK (confidence BETWEEN 0 AND 1),
    source_message_ids text[] NOT NULL DEFAULT '{}',
    status text NOT NULL CHECK (status IN ('stored', 'review', 'rejected', 'dismissed')),
    reasons text[] NOT NULL DEFAULT '{}',
    dedup_key text NOT NULL,
    fact_id text,
    created_at timestamptz NOT NULL DEFAULT now(),
    decided_at timestamptz
);
CREATE INDEX fact_candidates_by_user ON fact_candidates (org_id, user_id, status, created_at);
SELECT recollect_protect('memory_job_messages');
SELECT recollect_protect('fact_candidates');
"""
"""Background extraction: a debounced job per thread, the messages it will read (content is
cleared once extracted), and every candidate fact with its verdict (the review queue is the
`review` rows)."""

CREATE_APPROVALS = """
CREATE TABLE approval_workflows (
    id text PRIMARY KEY,
    thread_id text NOT NULL UNIQUE,
    org_id text NOT NULL,
    user_id text NOT NULL,
    kind text NOT NULL,
    state text NOT NULL CHECK (state IN ('draft', 'submitted_for_review', 'approved',
        'rejected', 'executing', 'completed', 'failed')),
    request jsonb NOT NULL,
    decision text CHECK (decision IN ('approve', 'reject')),
    decided_by text,
    decided_at timestamptz,
    decision_note text,
    origin_thread_id text,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);
CREATE INDEX approval_workflows_org_state ON approval_workflows (org_id, state, created_at);
CREATE INDEX approval_workflows_owner ON approval_workflows (org_id, user_id, created_at);
CREATE TABLE approval_audit (
    workflow_id text NOT NULL REFERENCES approval_workflows (id) ON DELETE CASCADE,
    transition text NOT NULL,
    org_id text NOT NULL,
    user_id text NOT NULL,
    from_state text,
    to_state text NOT NULL,
    actor text NOT NULL,
    note text,
    at timestamptz NOT NULL,
    PRIMARY KEY (workflow_id, transition)
);
CREATE TABLE refunds (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workflow_id text NOT NULL UNIQUE REFERENCES approval_workflows (id),
    org_id text NOT NULL,
    user_id text NOT NULL,
    order_id text NOT NULL,
    amount numeric(12, 2) NOT NULL CHECK (amount > 0),
    currency text NOT NULL,
    reason text NOT NULL,
    approved_by text NOT NULL,
    executed_at timestamptz NOT NULL,
    UNIQUE (org_id, user_id, order_id)
);
DO $$
DECLARE
    target text;
BEGIN
    -- Reviewers read their organisation's workflows; only the owner's scope writes them.
    FOREACH target IN ARRAY ARRAY['approval_workflows', 'approval_audit', 'refunds'] LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', target);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', target);
        EXECUTE format(
            'CREATE POLICY org_reads ON %I FOR SELECT '
            'USING (org_id = current_setting(''app.org_id'', true))', target);
        EXECUTE format(
            'CREATE POLICY owner_writes ON %I '
            'USING (org_id = current_setting(''app.org_id'', true) '
            '   AND user_id = current_setting(''app.user_id'', true)) '
            'WITH CHECK (org_id = current_setting(''app.org_id'', true) '
            '   AND user_id = current_setting(''app.user_id'', true))', target);
    END LOOP;
END
$$;
"""
"""Approval workflows, their audit trail and the refunds they execute. Reviewers read their
organisation's workflows; only the owner's scope writes them."""


PROFILE_DOCUMENTS = """
CREATE TABLE profiles_next (
    org_id text NOT NULL,
    user_id text NOT NULL,
    revision bigint NOT NULL DEFAULT 1,
    schema_version smallint NOT NULL CHECK (schema_version >= 1),
    document jsonb NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, user_id)
);
INSERT INTO profiles_next (org_id, user_id, schema_version, document, updated_at)
SELECT org_id, user_id, 1, jsonb_object_agg(key, value), max(updated_at)
FROM profiles GROUP BY org_id, user_id;
DROP TABLE profiles;
ALTER TABLE profiles_next RENAME TO profiles;
ALTER INDEX profiles_next_pkey RENAME TO profiles_pkey;
SELECT recollect_protect('profiles');
"""
"""The profile becomes one versioned document per user (see `recollect.longterm.profile`); the
old key/value rows are carried over as version 1 and migrated to the current shape on read."""

SESSION_ENDS = """
ALTER TABLE threads ADD COLUMN ended_at timestamptz;
ALTER TABLE memory_jobs ADD COLUMN episode_at timestamptz;
CREATE INDEX memory_jobs_open_sessions ON memory_jobs (updated_at) WHERE episode_at IS NULL;

CREATE FUNCTION recollect_idle_threads(p_idle_s float8, p_limit integer)
RETURNS TABLE (org_id text, user_id text, thread_id text, last_active timestamptz)
LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp AS $$
SELECT j.org_id, j.user_id, j.thread_id, max(j.updated_at) FROM memory_jobs AS j
WHERE j.episode_at IS NULL
GROUP BY j.org_id, j.user_id, j.thread_id
HAVING max(j.updated_at) < now() - make_interval(secs => p_idle_s)
   AND bool_and(j.status IN ('done', 'dead', 'superseded'))
ORDER BY max(j.updated_at)
LIMIT p_limit
$$;
"""
"""A session ends once (explicitly, on exit, or after inactivity) and leaves one episode;
`memory_jobs.episode_at` lets the inactivity sweep skip sessions already summarised. The sweep
looks across tenants, so (like the worker's claim) it is a definer function: the app role sees
only its scope's rows of `memory_jobs`."""


VALID_TIME = """
ALTER TABLE facts
    ADD COLUMN valid_from timestamptz GENERATED ALWAYS AS (learned_at) STORED,
    ADD COLUMN valid_to timestamptz;
UPDATE facts AS old SET valid_to = new.learned_at
FROM facts AS new
WHERE old.superseded_by = new.id AND old.metadata ? 'merged_into' IS NOT TRUE;
"""
"""When each fact held: from its own `learned_at` until its successor's. A merged duplicate
(`merged_into`) did not end, so it gets no `valid_to`."""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "pgvector", "CREATE EXTENSION IF NOT EXISTS vector"),
    Migration(2, "row_level_security", PROTECT_FUNCTION),
    Migration(3, "thread_owners", THREADS),
    Migration(4, "extraction queue, message buffer and fact candidates", CREATE_EXTRACTION_QUEUE),
    Migration(5, "approval workflows, their audit trail and refunds", CREATE_APPROVALS),
    Migration(6, "long-term memory: facts, profiles, episodes", LONG_TERM_MEMORY_SQL),
    Migration(7, "memory_jobs behind row-level security", PROTECT_MEMORY_JOBS_SQL),
    Migration(8, "organisation-shared facts", ORG_SHARED_FACTS_SQL),
    Migration(9, "profile as one versioned document per user", PROFILE_DOCUMENTS),
    Migration(10, "session ends: one episode per ended thread", SESSION_ENDS),
    Migration(11, "valid time of facts: valid_from and valid_to", VALID_TIME),
)


def migrate(uri: str) -> int:
    """Bring the database to the current schema; safe to call from many processes at once."""
    check_reachable(uri)
    with psycopg.connect(uri, **CONNECTION_KWARGS) as conn:
        return setup(conn)


def current_version(conn: Connection[Any]) -> int:
    """The highest applied migration, 0 on a fresh database."""
    conn.execute(CREATE_MIGRATIONS_TABLE)
    row = conn.execute("SELECT coalesce(max(version), 0) AS v FROM recollect_migrations").fetchone()
    return int(_first(row))


def setup(conn: Connection[Any]) -> int:
    """Apply what is missing (ours, then LangGraph's checkpoint tables), grant the app role its
    rights, and return our version. Needs an admin (table-owning) connection."""
    _acquire_lock(conn)
    try:
        applied = current_version(conn)
        for migration in (m for m in MIGRATIONS if m.version > applied):
            with conn.transaction():
                conn.execute(migration.sql, prepare=False)  # several statements: never prepared
                conn.execute(
                    "INSERT INTO recollect_migrations (version, name) VALUES (%s, %s)",
                    (migration.version, migration.name),
                )
        PostgresSaver(conn).setup()
        ensure_app_role(conn)
        return current_version(conn)
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK_KEY,))


def _acquire_lock(conn: Connection[Any]) -> None:
    """Poll rather than block: a waiter inside `pg_advisory_lock` holds a transaction open,
    and the checkpointer's `CREATE INDEX CONCURRENTLY` would wait on it forever (deadlock)."""
    deadline = time.monotonic() + LOCK_TIMEOUT_S
    while not _first(
        conn.execute("SELECT pg_try_advisory_lock(%s)", (MIGRATION_LOCK_KEY,)).fetchone()
    ):
        if time.monotonic() > deadline:
            raise TimeoutError(f"another process has been migrating for over {LOCK_TIMEOUT_S}s")
        time.sleep(0.05)


def _first(row: Any) -> Any:
    """First column of a row from either a tuple or a dict row factory."""
    if isinstance(row, dict):
        return next(iter(row.values()))
    return row[0]


def _check_numbering() -> None:
    """Versions are positions: a gap or a reordering is a mistake, caught at import."""
    for position, migration in enumerate(MIGRATIONS, start=1):
        if migration.version != position:
            raise RuntimeError(f"migration {migration.name!r} is numbered {migration.version}")


_check_numbering()
