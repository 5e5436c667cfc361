"""How many unended facts each scope held when this process last counted, for a while.

A recall's dense statement chooses between scoring every vector of the scope and the binary
codes' prefilter by counting the scope's facts first (`fact_sql.DENSE_COUNTED`): about 2.6 ms
for a user of 10,000 facts and 8 ms past 20,000, paid on every turn for an answer that changes
slowly. The statement returns the count; the process keeps it for `KEPT_FOR` seconds and reads
with the statement that count chose, uncounted (`fact_sql.DENSE_EXACT`, `fact_sql.DENSE_CODED`).

A stale size can only choose the slower or the less exact of two correct reads, never a wrong
fact: a grown user is scored exactly a while longer, a shrunk one goes through the codes, whose
`fact_sql.RESCORED` best are all of a small user's facts.
"""

from __future__ import annotations

import threading
from time import monotonic

from recollect.store.scope import Scope

KEPT_FOR = 300.0
"""Seconds a count is trusted: users gain facts by the turn, not by the thousand a minute."""
KNOWN_SIZE = 4096
"""Scopes remembered; the oldest count is forgotten first."""

_Key = tuple[str, str, str, str, int]


class ScopeSizes:
    """Recent counts of scopes' unended facts of one vector width, bounded."""

    def __init__(self, size: int = KNOWN_SIZE, kept_for: float = KEPT_FOR) -> None:
        self._counts: dict[_Key, tuple[int, float]] = {}
        self._size = size
        self._kept_for = kept_for
        self._lock = threading.Lock()

    def known(self, scope: Scope, dim: int) -> int | None:
        """The scope's count for vectors of width `dim`, unless none is recent."""
        with self._lock:
            found = self._counts.get(_key(scope, dim))
        if found is None or monotonic() - found[1] > self._kept_for:
            return None
        return found[0]

    def counted(self, scope: Scope, dim: int, count: int) -> None:
        """Remember a count a recall's dense statement returned."""
        key = _key(scope, dim)
        with self._lock:
            self._counts.pop(key, None)
            if len(self._counts) >= self._size:
                self._counts.pop(next(iter(self._counts)))
            self._counts[key] = (count, monotonic())


def _key(scope: Scope, dim: int) -> _Key:
    return (scope.kind.value, scope.org_id, scope.owner_id, scope.session_id or "", dim)
