"""One call that opens everything an agent's memory needs in a process: the database (the
`DATABASE_URI`, else the embedded server), its schema, the long-term memory engine, LangGraph's
checkpointer and a `BaseStore`, all on one pool that row-level security binds."""

from __future__ import annotations

import atexit
import threading
from contextlib import AbstractContextManager, ExitStack
from types import TracebackType
from typing import Any

from psycopg_pool import ConnectionPool

from recollect.basestore.store import RecollectStore
from recollect.history.owned_checkpoints import ScopedPostgresSaver
from recollect.history.retention import retention_from_env
from recollect.longterm.configured import configured_memory
from recollect.longterm.facts import LongTermMemory
from recollect.state.context import Context
from recollect.store.acting import acting_as
from recollect.store.migrations import prepare
from recollect.store.pool import install_process_pool, run_before_closing
from recollect.store.roles import app_uri
from recollect.store.scope import Scope
from recollect.store.server import open_pool, resolve_uri


class OpenedMemory:
    """The memory engine, checkpointer and store of one database, open until `close()` (or
    the end of a `with` block, or the process's exit)."""

    def __init__(self, uri: str | None = None, *, announce: bool = False) -> None:
        target = uri or resolve_uri(announce=announce)
        prepare(target)
        self.pool: ConnectionPool[Any] = open_pool(app_uri(target))
        """Connections as the app role; every statement on them is tenant-scoped."""
        self.checkpointer = ScopedPostgresSaver(self.pool)
        """LangGraph's `PostgresSaver`, keeping each thread's checkpoints behind row-level
        security as the run's `Context` user (the newest `RECOLLECT_CHECKPOINT_RETENTION`)."""
        self.checkpointer.retain = retention_from_env()
        self.engine: LongTermMemory = configured_memory(self.pool)
        """Facts, profile and episodes: what `MemoryMiddleware(...)` and the nodes recall."""
        self.store = RecollectStore(self.engine)
        """The same memory as LangGraph's `BaseStore`, for `compile(store=...)` and tools."""
        self._open = ExitStack()
        self._open.callback(self.pool.close)
        self._open.enter_context(install_process_pool(self.pool))
        self._closed = threading.Event()
        atexit.register(self.close)

    def as_user(self, context: Context) -> AbstractContextManager[Scope]:
        """Act as `context`'s user outside a run, for `get_state` and the like: a thread's
        checkpoints are visible to its owner only (a run acts as its own `Context`)."""
        return acting_as(Scope.for_user(context.org_id, context.user_id))

    def close(self) -> None:
        """Write what is still queued (turn traces), then close the pool; idempotent."""
        if self._closed.is_set():
            return
        self._closed.set()
        run_before_closing()
        self._open.close()

    def __enter__(self) -> OpenedMemory:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()


def open_memory(uri: str | None = None, *, announce: bool = False) -> OpenedMemory:
    """Open the database at `uri` (default: `DATABASE_URI`, or the embedded Postgres under
    `.recollect/`), migrate it, and hand back its memory, checkpointer and store."""
    return OpenedMemory(uri, announce=announce)
