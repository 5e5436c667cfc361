"""Where accepted facts go: the long-term store's write path, behind a narrow interface.

The background job validates and writes a whole batch in one transaction (facts, verdicts,
and the mark that the messages were extracted), so the writer receives that transaction's
connection: a crash anywhere leaves nothing half-written, and a retry never writes twice.
"""

from __future__ import annotations

from typing import Any, Protocol

from psycopg import Connection

from recollect.state.memory import NewFact
from recollect.state.scope import Scope


class FactWriter(Protocol):
    """The long-term store's write path (dedup, reinforcement, supersession, embedding)."""

    def remember(self, conn: Connection[Any], scope: Scope, fact: NewFact) -> str | None:
        """Store `fact` inside the caller's transaction; return the stored fact's id."""
        ...


class LedgerOnlyWriter:
    """Stand-in until a long-term store is configured: accepted facts are kept only as
    `stored` rows of `fact_candidates`; nothing else is written and no id is returned."""

    def remember(self, conn: Connection[Any], scope: Scope, fact: NewFact) -> str | None:
        return None


def default_writer() -> FactWriter:
    """The writer the worker, CLI and graphs use unless one is passed in."""
    return LedgerOnlyWriter()
