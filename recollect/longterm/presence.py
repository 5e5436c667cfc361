"""Whether a dense search could find anything for a scope, so recall embeds only when it can.

Embedding the query is most of a served turn's CPU (measured in `bench.load`), and a scope
with no embedded fact or episode (every new user) can get nothing from the dense half of
recall. One indexed `EXISTS` answers that before the embedder runs; the answer is remembered
per process only when it is yes (memory that later disappears costs an embedding, never a
missed fact).
"""

from __future__ import annotations

import threading
from typing import Any

from psycopg_pool import AsyncConnectionPool, ConnectionPool

from recollect.longterm.fact_sql import _READ_SCOPE
from recollect.store.scope import Scope
from recollect.store.tenancy import ascoped, scoped

_PRESENCE = """
SELECT EXISTS (SELECT 1 FROM facts WHERE {scope} AND embedding IS NOT NULL)
    OR EXISTS (SELECT 1 FROM episodes WHERE {scope} AND embedding IS NOT NULL) AS found
"""
PRESENCE = {kind: _PRESENCE.format(scope=clause) for kind, clause in _READ_SCOPE.items()}
"""Any embedded row, live or history, that the dense statements of `recall` could read."""
KNOWN_SIZE = 4096


class DensePresence:
    """Scopes known to hold embedded memory, bounded; a miss asks the database."""

    def __init__(self, size: int = KNOWN_SIZE) -> None:
        self._known: dict[tuple[str, str, str, str], None] = {}
        self._size = size
        self._lock = threading.Lock()

    def may_match(self, pool: ConnectionPool[Any], scope: Scope) -> bool:
        """True when the scope has (or had) an embedded fact or episode."""
        if self._known_yes(scope):
            return True
        with scoped(pool, scope) as conn:
            row = conn.execute(PRESENCE[scope.kind], _params(scope)).fetchone()
        return self._answered(scope, row)

    async def amay_match(self, pool: AsyncConnectionPool[Any], scope: Scope) -> bool:
        """The async twin of `may_match`."""
        if self._known_yes(scope):
            return True
        async with ascoped(pool, scope) as conn:
            row = await (await conn.execute(PRESENCE[scope.kind], _params(scope))).fetchone()
        return self._answered(scope, row)

    def _known_yes(self, scope: Scope) -> bool:
        with self._lock:
            return _key(scope) in self._known

    def _answered(self, scope: Scope, row: dict[str, Any] | None) -> bool:
        found = bool(row and row["found"])
        if found:
            with self._lock:
                if len(self._known) >= self._size:
                    self._known.pop(next(iter(self._known)))
                self._known[_key(scope)] = None
        return found


def _key(scope: Scope) -> tuple[str, str, str, str]:
    return (scope.kind.value, scope.org_id, scope.owner_id, scope.session_id or "")


def _params(scope: Scope) -> dict[str, Any]:
    return {"org_id": scope.org_id, "user_id": scope.owner_id, "session_id": scope.session_id}
