"""Schema changes as an append-only list, applied once each, in order, by `setup()`.

Never reorder a released migration or change what it does to a database that could run it: add
a new one. Each runs in its own transaction and is recorded in `recollect_migrations`; an
advisory lock keeps concurrent starts from racing. The migrating role needs no superuser: a
database owner with CREATEROLE (or roles a DBA made, see `role_setup`) on Postgres 16 to 18.
While a migration runs its owner sees every row (`every_row`), every table's row count is
compared before and after, and a migration that reshapes rows declares how to count them
(`RowCheck`): a count that does not match stops it before it commits.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import psycopg
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg import Connection

from recollect.store.errors import (
    ConfigurationError,
    DatabaseUnavailableError,
    MigrationError,
    SchemaOutdatedError,
    UnsupportedServerError,
)
from recollect.store.every_row import lift_force, owner_sees_every_row
from recollect.store.role_setup import ensure_roles, grant_rights
from recollect.store.roles import RoleNames, app_uri, login_hint, role_names
from recollect.store.schema.approval_authority import APPROVAL_AUTHORITY_SQL
from recollect.store.schema.approvals import CREATE_APPROVALS
from recollect.store.schema.authorship import AUTHORSHIP_SQL
from recollect.store.schema.centred_codes import CENTRED_CODES_SQL, CENTRES_RECORDED
from recollect.store.schema.checkpoints import CHECKPOINTS_BEHIND_RLS
from recollect.store.schema.core import PROTECT_FUNCTION, THREADS
from recollect.store.schema.covering_reads import COVERING_READS_SQL
from recollect.store.schema.definers import definers_sql
from recollect.store.schema.erasure_role import forget_actor_for_maintenance
from recollect.store.schema.extraction_queue import CREATE_EXTRACTION_QUEUE
from recollect.store.schema.fact_encodings import FACT_ENCODINGS
from recollect.store.schema.fact_words import FACT_WORDS_SQL
from recollect.store.schema.half_vectors import HALF_VECTORS_SQL
from recollect.store.schema.held_turns import HELD_TURNS_SQL
from recollect.store.schema.long_term import LONG_TERM_MEMORY_SQL
from recollect.store.schema.memory_jobs import (
    CLAIM_JOB_FOR_MODELS_SQL,
    PROTECT_MEMORY_JOBS_SQL,
)
from recollect.store.schema.org_admin import ORG_ADMIN_WRITES_SQL
from recollect.store.schema.org_facts import ORG_SHARED_FACTS_SQL
from recollect.store.schema.plan_days import PLAN_DAYS_INDEX
from recollect.store.schema.planned_facts import PLANNED_FACTS
from recollect.store.schema.portable import PORTABLE_IDS_AND_FORCED_SECURITY
from recollect.store.schema.profiles import PROFILE_DOCUMENTS
from recollect.store.schema.sessions import SESSION_ENDS
from recollect.store.schema.split_scans import SPLIT_SCANS_SQL
from recollect.store.schema.store_items import STORE_ITEMS_SQL
from recollect.store.schema.successors import SUCCESSORS_INDEX
from recollect.store.schema.traces import MEMORY_TRACES, TRACES_BY_AGE
from recollect.store.schema.unlisting import UNLISTING_SQL
from recollect.store.schema.valid_from_when_missing import VALID_FROM_WHEN_MISSING_SQL
from recollect.store.schema.valid_time import VALID_TIME
from recollect.store.scope import ORG_OWNER
from recollect.store.server import (
    CONNECTION_KWARGS,
    check_reachable,
    configured_uri,
    redact_password,
)
from recollect.store.table_counts import RowCheck, check_counts, count_rows, table_rows

CHECKPOINT_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
OLDEST_SERVER = 160000
"""Postgres 16: the oldest server we run on (`server_version_num`)."""
MIGRATION_LOCK_KEY = 0x5245_434F  # "RECO": one lock id for every process migrating this database
LOCK_TIMEOUT_S = 120

MIGRATE_ON_START_ENV = "RECOLLECT_MIGRATE_ON_START"
APPLIED_VERSION = "SELECT coalesce(max(version), 0) AS v FROM recollect_migrations"

CREATE_MIGRATIONS_TABLE = """
CREATE TABLE IF NOT EXISTS recollect_migrations (
    version integer PRIMARY KEY,
    name text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
)
"""


@dataclass(frozen=True)
class Migration:
    """One schema step; versions are positions along `MIGRATIONS`. `sql` is a string, or a
    function of the deployment's role names for a step that names them."""

    version: int
    name: str
    sql: str | Callable[[RoleNames], str]
    checks: tuple[RowCheck, ...] = ()
    vacuums: tuple[str, ...] = ()
    """Tables whose rows it may rewrite: vacuumed once it commits, if `rewrote` says it did, so
    the covering indexes answer alone again (a rewritten row's page is not all-visible until a
    vacuum, and an index-only scan reads the heap for every entry on it)."""
    rewrote: str = "SELECT false"
    """A query of one boolean: whether the migration rewrote rows (asked in its transaction)."""

    @property
    def title(self) -> str:
        """How errors name it."""
        return f"migration {self.version} ({self.name})"

    def text(self, roles: RoleNames) -> str:
        """The SQL to run for this deployment."""
        return self.sql if isinstance(self.sql, str) else self.sql(roles)


PROFILES_PER_USER = RowCheck(
    "profiles (one per user)",
    before="SELECT count(*) FROM (SELECT DISTINCT org_id, user_id FROM profiles) AS users",
    after="SELECT count(*) FROM profiles",
)
AUTHORS_FILLED = RowCheck(
    "facts attributed to their owner",
    before=f"SELECT count(*) FROM facts WHERE user_id <> '{ORG_OWNER}'",
    after=f"SELECT count(*) FROM facts WHERE user_id <> '{ORG_OWNER}' AND author_id = user_id",
)
VALID_TO_FILLED = RowCheck(
    "superseded facts given an end",
    before="SELECT count(*) FROM facts AS old JOIN facts AS new ON old.superseded_by = new.id "
    "WHERE old.metadata ? 'merged_into' IS NOT TRUE",
    after="SELECT count(*) FROM facts WHERE valid_to IS NOT NULL",
)


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "pgvector", "CREATE EXTENSION IF NOT EXISTS vector"),
    Migration(2, "row_level_security", PROTECT_FUNCTION),
    Migration(3, "thread_owners", THREADS),
    Migration(4, "extraction queue, message buffer and fact candidates", CREATE_EXTRACTION_QUEUE),
    Migration(5, "approval workflows, their audit trail and refunds", CREATE_APPROVALS),
    Migration(6, "long-term memory: facts, profiles, episodes", LONG_TERM_MEMORY_SQL),
    Migration(7, "memory_jobs behind row-level security", PROTECT_MEMORY_JOBS_SQL),
    Migration(8, "organisation-shared facts", ORG_SHARED_FACTS_SQL),
    Migration(
        9, "profile as one versioned document per user", PROFILE_DOCUMENTS, (PROFILES_PER_USER,)
    ),
    Migration(10, "session ends: one episode per ended thread", SESSION_ENDS),
    Migration(11, "claim only jobs queued for the worker's models", CLAIM_JOB_FOR_MODELS_SQL),
    Migration(12, "approval decisions by reviewers only, visible by role", APPROVAL_AUTHORITY_SQL),
    Migration(13, "facts carry their author", AUTHORSHIP_SQL, (AUTHORS_FILLED,)),
    Migration(14, "valid time of facts: valid_from and valid_to", VALID_TIME, (VALID_TO_FILLED,)),
    Migration(15, "checkpoints behind row-level security", CHECKPOINTS_BEHIND_RLS),
    Migration(16, "definer functions: their own role, bounded arguments", definers_sql),
    Migration(17, "memory traces per turn and per extraction job", MEMORY_TRACES),
    Migration(18, "store items: BaseStore keys and values over facts", STORE_ITEMS_SQL),
    Migration(19, "reranker encodings per fact", FACT_ENCODINGS),
    Migration(20, "memory traces by age, for retention", TRACES_BY_AGE),
    Migration(
        21,
        "ids made on any Postgres 16+; row-level security forced on every user-data table",
        PORTABLE_IDS_AND_FORCED_SECURITY,
    ),
    Migration(22, "pseudonymising an actor is the worker role's", forget_actor_for_maintenance),
    Migration(
        23,
        "shared memory written by org admins; store items name their writer",
        ORG_ADMIN_WRITES_SQL,
    ),
    Migration(24, "plans start later: valid_from stored, learned_at by default", PLANNED_FACTS),
    Migration(25, "plans and the facts they end, indexed for profile reads", PLAN_DAYS_INDEX),
    Migration(
        26,
        "recall reads unended facts' words, vectors and binary codes from covering indexes",
        COVERING_READS_SQL,
    ),
    Migration(
        27,
        "a replaced fact's successor is indexed, so deleting a fact is a lookup",
        SUCCESSORS_INDEX,
    ),
    Migration(28, "each word of a large user's facts, listed for lexical recall", FACT_WORDS_SQL),
    Migration(
        29, "unended facts' vectors at half precision for the exact dense read", HALF_VECTORS_SQL
    ),
    Migration(
        30, "a fact's listed words are deleted by a trigger, not checked by a key", UNLISTING_SQL
    ),
    Migration(
        31,
        "a fact's start is filled in only when it is inserted without one",
        VALID_FROM_WHEN_MISSING_SQL,
    ),
    Migration(
        32,
        "a large user's binary codes are the signs of their vectors less the user's mean",
        CENTRED_CODES_SQL,
        vacuums=("facts",),
        rewrote=CENTRES_RECORDED,
    ),
    Migration(
        33, "the covering vector indexes ordered by fact id, to read in halves", SPLIT_SCANS_SQL
    ),
    Migration(34, "a turn's messages are held until its checkpoint commits", HELD_TURNS_SQL),
)


def migrate(uri: str) -> int:
    """Bring the database to the current schema; safe to call from many processes at once."""
    check_reachable(uri)
    try:
        with psycopg.connect(uri, **CONNECTION_KWARGS) as conn:
            return setup(conn)
    except psycopg.Error as exc:
        raise MigrationError("the roles and checkpoint tables", first_line(exc)) from exc


def latest_version() -> int:
    """The version this code's schema has once every migration is applied."""
    return MIGRATIONS[-1].version


def migrate_on_start(uri: str) -> bool:
    """Whether a serving process may migrate at start-up: `RECOLLECT_MIGRATE_ON_START`
    (`auto` by default: yes for the embedded server, which is local development; no for a
    configured database, where migrating is the operator's `recollect db migrate`)."""
    raw = (os.environ.get(MIGRATE_ON_START_ENV) or "auto").strip().lower()
    if raw in ("1", "true", "yes", "on"):
        return True
    if raw in ("0", "false", "no", "off"):
        return False
    if raw != "auto":
        raise ConfigurationError(f"{MIGRATE_ON_START_ENV} must be auto, on or off, got {raw!r}")
    return configured_uri() is None


def prepare(uri: str) -> int:
    """What a serving process does at start-up: migrate where the operator allows it, else
    check, on the app role's own connection, that the schema is current."""
    if migrate_on_start(uri):
        return migrate(uri)
    app = app_uri(uri)
    try:
        check_reachable(app)
    except DatabaseUnavailableError as exc:  # name the database as the operator configured it
        hint = login_hint("app", exc.reason) or exc.hint
        raise DatabaseUnavailableError(redact_password(uri), exc.reason, hint) from exc
    with psycopg.connect(app, **CONNECTION_KWARGS) as conn:
        try:
            row = conn.execute(APPLIED_VERSION).fetchone()
        except psycopg.errors.UndefinedTable:
            row = None
    version = int(_first(row)) if row else 0
    if version < latest_version():
        raise SchemaOutdatedError(version, latest_version())
    return version


def current_version(conn: Connection[Any]) -> int:
    """The highest applied migration, 0 on a fresh database."""
    conn.execute(CREATE_MIGRATIONS_TABLE)
    row = conn.execute(APPLIED_VERSION).fetchone()
    return int(_first(row))


def setup(conn: Connection[Any], *, up_to: int | None = None) -> int:
    """Apply what is missing (LangGraph's checkpoint tables first: our policies cover them),
    grant the app role its rights, and return our version. Needs the database owner's
    connection (no superuser needed). `up_to` stops at an older version, as a database of
    that release was left (nothing is granted then: such a schema serves no request)."""
    _check_server(conn)
    roles = role_names()
    target = latest_version() if up_to is None else up_to
    lock = _acquire_lock(conn)
    try:
        ensure_roles(conn, roles)
        _setup_checkpoints(conn)
        applied = current_version(conn)
        rewritten: set[str] = set()
        for migration in (m for m in MIGRATIONS if applied < m.version <= target):
            if _apply(conn, migration, roles):
                rewritten.update(migration.vacuums)
        if target == latest_version():
            grant_rights(conn, roles)
        _vacuum(conn, sorted(rewritten))
        return current_version(conn)
    finally:
        lock.close()  # ends its transaction, and with it the lock


def _vacuum(conn: Connection[Any], tables: list[str]) -> None:
    """`VACUUM (ANALYZE)` the tables migrations rewrote. A vacuum cannot run inside a
    transaction: on a connection that is not in autocommit mode it is left to autovacuum."""
    if not conn.autocommit:
        return
    for table in tables:
        conn.execute(psycopg.sql.SQL("VACUUM (ANALYZE) {}").format(psycopg.sql.Identifier(table)))


def _apply(conn: Connection[Any], migration: Migration, roles: RoleNames) -> bool:
    """One migration in one transaction, seeing every row, with its counts checked; whether
    it rewrote rows (`Migration.rewrote`)."""
    try:
        with conn.transaction(), owner_sees_every_row(conn):
            tables_before = table_rows(conn)
            declared = [count_rows(conn, check.before) for check in migration.checks]
            conn.execute(migration.text(roles), prepare=False)  # several statements
            lift_force(conn)  # the tables it made or protected are counted whole too
            problem = check_counts(conn, migration.checks, declared, tables_before)
            if problem:
                raise MigrationError(migration.title, f"{problem}; nothing of it was applied")
            rewrote = bool(_first(conn.execute(migration.rewrote, prepare=False).fetchone()))
            conn.execute(
                "INSERT INTO recollect_migrations (version, name) VALUES (%s, %s)",
                (migration.version, migration.name),
            )
    except psycopg.Error as exc:
        raise MigrationError(
            migration.title, f"{first_line(exc)}; nothing of it was applied"
        ) from exc
    return rewrote


def _setup_checkpoints(conn: Connection[Any]) -> None:
    """LangGraph's own checkpoint migrations, when any is pending. They run outside a
    transaction (they build indexes concurrently), so the checkpoint tables are un-FORCEd
    for their duration and FORCEd again after."""
    saver = PostgresSaver(conn)
    conn.execute(saver.MIGRATIONS[0])
    row = conn.execute("SELECT coalesce(max(v), -1) AS v FROM checkpoint_migrations").fetchone()
    if int(_first(row)) >= len(saver.MIGRATIONS) - 1:
        return
    with owner_sees_every_row(conn, only=CHECKPOINT_TABLES):
        saver.setup()


def _check_server(conn: Connection[Any]) -> None:
    """Refuse a server older than we support, with one line, before anything is changed."""
    number = int(_first(conn.execute("SELECT current_setting('server_version_num')").fetchone()))
    if number < OLDEST_SERVER:
        version = _first(conn.execute("SELECT current_setting('server_version')").fetchone())
        raise UnsupportedServerError(
            f"Postgres {version} is too old: Recollect needs Postgres 16, 17 or 18 with pgvector"
        )


def _acquire_lock(conn: Connection[Any]) -> Connection[Any]:
    """A second connection to `conn`'s database whose open transaction holds the migration
    lock; closing it releases the lock. Transaction-level, so it holds through a transaction
    pooler (one server connection is kept for the open transaction) and can never be left
    behind on a pooled server connection. Poll rather than block: a waiter inside
    `pg_advisory_xact_lock` holds a snapshot, and the checkpointer's `CREATE INDEX
    CONCURRENTLY` would wait on it forever (deadlock). The idle holder holds none as long as
    the lock is taken by a simple query: an extended-protocol one leaves its portal, and the
    portal's snapshot, open until the transaction ends."""
    try_lock = psycopg.sql.SQL("SELECT pg_try_advisory_xact_lock({})").format(MIGRATION_LOCK_KEY)
    settings = {**CONNECTION_KWARGS, "autocommit": False}
    if conn.info.password:
        settings["password"] = conn.info.password
    lock: Connection[Any] = psycopg.connect(conn.info.dsn, **settings)
    deadline = time.monotonic() + LOCK_TIMEOUT_S
    try:
        while not _first(lock.execute(try_lock, prepare=False).fetchone()):
            lock.rollback()  # no transaction stays open between tries
            if time.monotonic() > deadline:
                raise MigrationError(
                    "the migration lock",
                    f"another process has been migrating for over {LOCK_TIMEOUT_S} s; let it "
                    "finish (or stop it) and migrate again",
                )
            time.sleep(0.05)
    except BaseException:
        lock.close()
        raise
    return lock


def first_line(exc: BaseException) -> str:
    """An error's first line, for a one-line message."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


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
