"""How many unended facts each scope held when this process last counted, for a while.

A recall's dense statement chooses between scoring every vector of the scope and the binary
codes' prefilter by counting the scope's facts first (`fact_sql.DENSE_COUNTED`): about 2.6 ms
for a user of 10,000 facts and 8 ms past 20,000, paid on every turn for an answer that changes
slowly. The statement returns the count; the process keeps it for `KEPT_FOR` seconds and reads
with the statement that count chose, uncounted (`fact_sql.DENSE_EXACT`, `fact_sql.DENSE_CODED`).

Past `fact_sql.EXACT_UP_TO` a recall also counts the scope whole and finds the id that splits
it (`fact_sql.SPLIT_POINT`), kept the same way: the dense read then runs in two ranges of ids,
one on each of two connections. A stale split only makes one range larger than it should be.

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
_Count = tuple[int, str | None, float]
"""A count, the id that splits the counted facts (if known), and when it was made."""


class ScopeSizes:
    """Recent counts of scopes' unended facts of one vector width, bounded."""

    def __init__(self, size: int = KNOWN_SIZE, kept_for: float = KEPT_FOR) -> None:
        self._counts: dict[_Key, _Count] = {}
        self._size = size
        self._kept_for = kept_for
        self._lock = threading.Lock()

    def known(self, scope: Scope, dim: int) -> int | None:
        """The scope's count for vectors of width `dim`, unless none is recent."""
        found = self._recent(scope, dim)
        return None if found is None else found[0]

    def split_id(self, scope: Scope, dim: int) -> str | None:
        """The id that splits the scope's facts of width `dim`, if a recent count found one."""
        found = self._recent(scope, dim)
        return None if found is None else found[1]

    def counted(self, scope: Scope, dim: int, count: int, split_id: str | None = None) -> None:
        """Remember a count a recall's dense statement returned, and the id that splits it."""
        key = _key(scope, dim)
        with self._lock:
            self._counts.pop(key, None)
            if len(self._counts) >= self._size:
                self._counts.pop(next(iter(self._counts)))
            self._counts[key] = (count, split_id, monotonic())

    def _recent(self, scope: Scope, dim: int) -> _Count | None:
        with self._lock:
            found = self._counts.get(_key(scope, dim))
        if found is None or monotonic() - found[2] > self._kept_for:
            return None
        return found


def _key(scope: Scope, dim: int) -> _Key:
    return (scope.kind.value, scope.org_id, scope.owner_id, scope.session_id or "", dim)
