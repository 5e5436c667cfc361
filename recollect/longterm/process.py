"""One long-term memory engine per process, opened on first use.

Graphs exported for LangGraph Platform and `langgraph dev` are compiled before any database
exists; their recall node asks for this engine on its first turn (same database resolution as
the checkpointer: `RECOLLECT_DATABASE_URI`, `DATABASE_URI`, `POSTGRES_URI`, else embedded).
"""

from __future__ import annotations

import threading

from recollect.longterm.configured import configured_memory
from recollect.longterm.facts import LongTermMemory
from recollect.store.pool import lifetime_pool

_lock = threading.Lock()
_engine: LongTermMemory | None = None


def process_memory() -> LongTermMemory:
    """The shared engine, with the embedder and reranker the environment configures, on the
    process's lifetime pool (the one the served store uses: one pool, not two)."""
    global _engine
    with _lock:
        if _engine is None:
            _engine = configured_memory(lifetime_pool())
        return _engine
