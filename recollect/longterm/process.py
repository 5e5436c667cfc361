"""One long-term memory engine per process, opened on first use.

Graphs exported for LangGraph Platform and `langgraph dev` are compiled before any database
exists; their recall node asks for this engine on its first turn (same database resolution as
the checkpointer: `RECOLLECT_DATABASE_URI`, `DATABASE_URI`, `POSTGRES_URI`, else embedded).
"""

from __future__ import annotations

import atexit
import threading

from recollect.longterm.configured import configured_memory
from recollect.longterm.facts import LongTermMemory
from recollect.store.migrations import prepare
from recollect.store.roles import app_uri
from recollect.store.server import open_pool, resolve_uri

_lock = threading.Lock()
_engine: LongTermMemory | None = None


def process_memory() -> LongTermMemory:
    """The shared engine, with the embedder and reranker the environment configures."""
    global _engine
    with _lock:
        if _engine is None:
            uri = resolve_uri(announce=False)
            prepare(uri)
            pool = open_pool(app_uri(uri), name="recollect-memory")
            atexit.register(pool.close)
            _engine = configured_memory(pool)
        return _engine
