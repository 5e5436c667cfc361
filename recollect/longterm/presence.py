"""Whether a dense search could find anything for a scope, so recall embeds only when it can.

Embedding the query is most of a served turn's CPU (measured in `bench.load`), and a scope
with no embedded fact or episode (every new user) can get nothing from the dense half of
recall. One indexed `EXISTS` answers that; it travels in the same pipeline as the recall's
lexical and profile reads (`recall.fetch`), so asking costs no round trip of its own. The
answer is remembered per process only when it is yes (memory that later disappears costs an
embedding, never a missed fact); the first recall that finds yes reads again with the query
embedded.
"""

from __future__ import annotations

import threading

from recollect.longterm.fact_sql import _READ_SCOPE
from recollect.store.scope import Scope

_PRESENCE = """
SELECT EXISTS (SELECT 1 FROM facts WHERE {scope} AND embedding IS NOT NULL)
    OR EXISTS (SELECT 1 FROM episodes WHERE {scope} AND embedding IS NOT NULL) AS found
"""
PRESENCE = {kind: _PRESENCE.format(scope=clause) for kind, clause in _READ_SCOPE.items()}
"""Any embedded row, live or history, that the dense statements of `recall` could read."""
KNOWN_SIZE = 4096


class DensePresence:
    """Scopes known to hold embedded memory, bounded; for the others, recall asks."""

    def __init__(self, size: int = KNOWN_SIZE) -> None:
        self._known: dict[tuple[str, str, str, str], None] = {}
        self._size = size
        self._lock = threading.Lock()

    def known(self, scope: Scope) -> bool:
        """True when the scope is known to have (or have had) an embedded fact or episode."""
        with self._lock:
            return _key(scope) in self._known

    def answered(self, scope: Scope, found: bool) -> bool:
        """Remember a yes from `PRESENCE`; returns `found`."""
        if found:
            with self._lock:
                if len(self._known) >= self._size:
                    self._known.pop(next(iter(self._known)))
                self._known[_key(scope)] = None
        return found


def _key(scope: Scope) -> tuple[str, str, str, str]:
    return (scope.kind.value, scope.org_id, scope.owner_id, scope.session_id or "")
