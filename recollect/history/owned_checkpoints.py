"""Checkpoints behind row-level security: every statement of the saver runs in a transaction
scoped to the identity acting, and a thread belongs to whoever wrote to it first.

The checkpoint tables' policies show a thread's rows only to its owner (and approval threads
to reviewers of the owner's organisation); an unscoped connection sees none. Whose scope a
call runs in is decided here, in this order:
1. the identity the served API authenticated (`langgraph dev`, LangGraph Platform);
2. a scope set for the block with `acting_as` (the `Approvals` API, a worker reading one job's
   thread);
3. off the server only, the run's own `Context` (`user_id`, `org_id`, `permissions`): a script
   or the CLI that invokes a graph already holds the database;
4. the scope the saver was opened for (`recollect chat --user ana`).
On the served API a run's context is the caller's to write, so there only 1 counts.

A turn's `input` checkpoint and the retention prune it triggers share one transaction (on the
prune's snapshot), so the prune costs no transaction of its own; LangGraph's own `prune`
runs its snapshot transaction through the same scoped cursor. The checkpoint that commits a
turn releases its held extraction messages in its own transaction (`turn_release`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Generator, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, asynccontextmanager, contextmanager, nullcontext
from contextvars import ContextVar
from typing import Any, TypeVar, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from psycopg import AsyncCursor, Cursor
from psycopg.errors import InsufficientPrivilege
from psycopg.rows import DictRow, dict_row
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from recollect.auth.served import served_identity
from recollect.extraction.queue import RELEASE
from recollect.history.retention import (
    SNAPSHOT_SQL,
    AsyncRetainingPostgresSaver,
    RetainingPostgresSaver,
    _arun,
    _prune_now,
    _run,
    _thread_of,
    keep_turns,
)
from recollect.history.turn_release import ReleasesQueuedTurns, release_params
from recollect.langgraph_private import (
    CONFIG_KEY_RUNTIME,
    aexecute,
    async_connection,
    execute,
    keep_latest,
    refuse_delta_threads,
    sync_connection,
)
from recollect.store.acting import acting, acting_as
from recollect.store.errors import ThreadAccessError
from recollect.store.scope import Scope
from recollect.store.tenancy import SET_SCOPE, one_trip, scope_settings

APPROVAL_GRAPH = "approval"
CLAIM_THREAD = """
INSERT INTO threads (thread_id, org_id, user_id, kind)
VALUES (%(thread_id)s, %(org_id)s, %(user_id)s, %(kind)s)
ON CONFLICT (thread_id) DO NOTHING
"""
UNSCOPED = {
    "org_id": "",
    "user_id": "",
    "session_id": "",
    "kind": "",
    "reviewer": "off",
    "org_admin": "off",
}
"""Settings that match no row: what a call with no identity runs under."""
CLAIM_CACHE_SIZE = 4096

_HELD: ContextVar[tuple[object, Any] | None] = ContextVar("recollect_held_cursor", default=None)
"""The saver and snapshot cursor of a put that prunes: the calls it makes reuse the cursor."""


def acting_scope(bound: Scope | None) -> Scope | None:
    """Whose checkpoints a call may touch right now (see the module's order)."""
    served = served_identity()
    if served is not None:
        return served.scope()
    return acting() or bound


def run_scope(config: RunnableConfig) -> AbstractContextManager[Any]:
    """Act as the run's `Context` for one call, when nothing more authoritative acts (3.)."""
    if served_identity() is not None or acting() is not None:
        return nullcontext()
    runtime = (config.get("configurable") or {}).get(CONFIG_KEY_RUNTIME)
    context = getattr(runtime, "context", None)
    if isinstance(context, Mapping):
        org_id, user_id = context.get("org_id"), context.get("user_id")
        permissions = context.get("permissions") or ()
    else:
        org_id = getattr(context, "org_id", None)
        user_id = getattr(context, "user_id", None)
        permissions = getattr(context, "permissions", ()) or ()
    if not isinstance(org_id, str) or not isinstance(user_id, str):
        return nullcontext()
    return acting_as(Scope.for_user(org_id, user_id, frozenset(permissions)))


def _settings(scope: Scope | None) -> dict[str, str]:
    return scope_settings(scope) if scope is not None else UNSCOPED


def _claim_params(scope: Scope, config: RunnableConfig, metadata: CheckpointMetadata) -> Any:
    configurable = config.get("configurable") or {}
    graph = metadata.get("graph_id") or configurable.get("graph_id")
    return {
        "thread_id": str(configurable["thread_id"]),
        "org_id": scope.org_id,
        "user_id": scope.user_id,
        "kind": "approval" if graph == APPROVAL_GRAPH else "agent",
    }


def _run_metadata(config: RunnableConfig) -> CheckpointMetadata:
    """What a step's writes know of the run (its `graph_id`), as the checkpoint would: the
    config's own mapping, read and never changed, so not copied for every batch of writes."""
    return cast(CheckpointMetadata, config.get("metadata") or {})


_Statement = TypeVar("_Statement", bound=tuple[str, Any, bool])


def _after_snapshot(
    statements: Generator[_Statement, list[DictRow], None],
) -> Generator[_Statement, list[DictRow], None]:
    """A prune's statements (ours or LangGraph's `keep_latest`) without its opening isolation
    level, which the scoped cursor sets itself (before the scope, as Postgres requires)."""
    first, _, _ = next(statements)
    assert first == SNAPSHOT_SQL
    try:
        request = statements.send([])
        while True:
            rows = yield request
            request = statements.send(rows)
    except StopIteration:
        return


class _Claims:
    """Threads this process already claimed, so a turn pays for the claim once."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, str, str], None] = {}

    def needed(self, params: dict[str, str]) -> bool:
        return (params["thread_id"], params["org_id"], params["user_id"]) not in self._seen

    def done(self, params: dict[str, str]) -> None:
        if len(self._seen) >= CLAIM_CACHE_SIZE:
            self._seen.pop(next(iter(self._seen)))
        self._seen[(params["thread_id"], params["org_id"], params["user_id"])] = None


class ScopedPostgresSaver(ReleasesQueuedTurns, RetainingPostgresSaver):
    """The retaining saver, with every statement in the acting identity's scope."""

    scope: Scope | None = None
    """The scope of last resort (see the module's order); None: only what acts says."""

    @property
    def _claims(self) -> _Claims:
        claims: _Claims | None = self.__dict__.get("_claim_cache")
        if claims is None:
            claims = self.__dict__["_claim_cache"] = _Claims()
        return claims

    @contextmanager
    def _cursor(
        self, *, pipeline: bool = False, snapshot: bool = False
    ) -> Iterator[Cursor[DictRow]]:
        held = _HELD.get()
        if held is not None and held[0] is self:  # inside a put that prunes: its transaction
            yield held[1]
            return
        settings = _settings(acting_scope(self.scope))
        serialised = nullcontext() if isinstance(self.conn, ConnectionPool) else self.lock
        # Pipelined whatever the caller asked: BEGIN, the scope, the call's statements and
        # COMMIT travel together, so a write costs one round trip and a read two, not five.
        with (
            serialised,
            sync_connection(self.conn) as conn,
            conn.pipeline(),
            conn.transaction(),
        ):
            if snapshot:
                conn.execute(SNAPSHOT_SQL)  # an isolation level must come first
            conn.execute(SET_SCOPE, settings)
            with conn.cursor(binary=True, row_factory=dict_row) as cur:
                yield cur

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        with run_scope(config):
            return super().get_tuple(config)

    def prune_thread(self, config: RunnableConfig) -> None:
        """The stock-semantics prune, in one scoped snapshot transaction."""
        with self._cursor(snapshot=True) as cur:
            _run(cur, _after_snapshot(keep_turns(_thread_of(config), max(self.retain, 1))))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """LangGraph's prune; `keep_latest` opens its snapshot through the scoped cursor."""
        if strategy != "keep_latest" or isinstance(thread_ids, str) or not thread_ids:
            super().prune(thread_ids, strategy=strategy)
            return
        ids = [str(thread_id) for thread_id in thread_ids]
        with self._cursor() as cur:
            execute(cur, refuse_delta_threads(ids))
        for thread_id in ids:
            with self._cursor(snapshot=True) as cur:
                execute(cur, _after_snapshot(keep_latest(thread_id)))

    def _claim(self, config: RunnableConfig, metadata: CheckpointMetadata) -> None:
        """Own the thread before its first row: a step's writes may reach the database before
        the checkpoint they follow, so both paths claim (once per process)."""
        scope = acting_scope(self.scope)
        if scope is not None:
            params = _claim_params(scope, config, metadata)
            if self._claims.needed(params):
                with self._cursor() as cur:
                    cur.execute(CLAIM_THREAD, params)
                self._claims.done(params)

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        with run_scope(config):
            self._claim(config, _run_metadata(config))
            super().put_writes(config, writes, task_id, task_path)

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        with run_scope(config):
            self._claim(config, metadata)
            prune = self.retain > 0 and _prune_now(config, metadata)
            release = release_params(config, checkpoint, new_versions)
            try:
                if not prune and release is None:
                    return super().put(config, checkpoint, metadata, new_versions)
                with self._cursor(snapshot=prune) as cur:  # the put, its prune, its release
                    held = _HELD.set((self, cur))
                    try:
                        saved = super().put(config, checkpoint, metadata, new_versions)
                    finally:
                        _HELD.reset(held)
                    if release is not None:
                        cur.execute(RELEASE, release)
                    return saved
            except InsufficientPrivilege as exc:
                raise ThreadAccessError(str(config["configurable"]["thread_id"])) from exc


class AsyncScopedPostgresSaver(ReleasesQueuedTurns, AsyncRetainingPostgresSaver):
    """The async twin of `ScopedPostgresSaver`, for `langgraph dev` and the Platform."""

    scope: Scope | None = None

    @property
    def _claims(self) -> _Claims:
        claims: _Claims | None = self.__dict__.get("_claim_cache")
        if claims is None:
            claims = self.__dict__["_claim_cache"] = _Claims()
        return claims

    @asynccontextmanager
    async def _cursor(
        self, *, pipeline: bool = False, snapshot: bool = False
    ) -> AsyncIterator[AsyncCursor[DictRow]]:
        held = _HELD.get()
        if held is not None and held[0] is self:  # inside a put that prunes: its transaction
            yield held[1]
            return
        settings = _settings(acting_scope(self.scope))
        # One shared connection serves one call at a time; a pool gives each call its own, so
        # concurrent runs do not queue behind each other's round trips (the pool bounds them).
        serialised = nullcontext() if isinstance(self.conn, AsyncConnectionPool) else self.lock
        async with (
            serialised,
            async_connection(self.conn) as conn,
            one_trip(conn, settings, first=SNAPSHOT_SQL if snapshot else None),
            conn.cursor(binary=True, row_factory=dict_row) as cur,
        ):
            yield cur

    async def _aclaim(self, config: RunnableConfig, metadata: CheckpointMetadata) -> None:
        """Own the thread before its first row (see `ScopedPostgresSaver._claim`)."""
        scope = acting_scope(self.scope)
        if scope is not None:
            params = _claim_params(scope, config, metadata)
            if self._claims.needed(params):
                async with self._cursor() as cur:
                    await cur.execute(CLAIM_THREAD, params)
                self._claims.done(params)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await self._aclaim(config, _run_metadata(config))
        await super().aput_writes(config, writes, task_id, task_path)

    async def aprune_thread(self, config: RunnableConfig) -> None:
        """The stock-semantics prune, in one scoped snapshot transaction."""
        async with self._cursor(snapshot=True) as cur:
            statements = keep_turns(_thread_of(config), max(self.retain, 1))
            await _arun(cur, _after_snapshot(statements))

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """The async twin of `ScopedPostgresSaver.prune`."""
        if strategy != "keep_latest" or isinstance(thread_ids, str) or not thread_ids:
            await super().aprune(thread_ids, strategy=strategy)
            return
        ids = [str(thread_id) for thread_id in thread_ids]
        async with self._cursor() as cur:
            await aexecute(cur, refuse_delta_threads(ids))
        for thread_id in ids:
            async with self._cursor(snapshot=True) as cur:
                await aexecute(cur, _after_snapshot(keep_latest(thread_id)))

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        await self._aclaim(config, metadata)
        prune = self.retain > 0 and _prune_now(config, metadata)
        release = release_params(config, checkpoint, new_versions)
        try:
            if not prune and release is None:
                return await super().aput(config, checkpoint, metadata, new_versions)
            async with self._cursor(snapshot=prune) as cur:  # the put, its prune, its release
                held = _HELD.set((self, cur))
                try:
                    saved = await super().aput(config, checkpoint, metadata, new_versions)
                finally:
                    _HELD.reset(held)
                if release is not None:
                    await cur.execute(RELEASE, release)
                return saved
        except InsufficientPrivilege as exc:
            raise ThreadAccessError(str(config["configurable"]["thread_id"])) from exc
