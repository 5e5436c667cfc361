"""Who a block of work acts as, when no authenticated request says so.

Checkpoints are read and written under row-level security like every other table; code that
works on one user's thread outside a served request (the `Approvals` API, the worker reading
an idle session's checkpoint) says whose it is with `acting_as`, and the checkpointer reads it.
A context variable, so concurrent threads and tasks keep their own, and LangGraph carries it
into the steps it runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from recollect.store.scope import Scope

_acting: ContextVar[Scope | None] = ContextVar("recollect_acting_scope", default=None)


@contextmanager
def acting_as(scope: Scope) -> Iterator[Scope]:
    """Act as `scope` until the block exits (nests)."""
    token = _acting.set(scope)
    try:
        yield scope
    finally:
        _acting.reset(token)


def acting() -> Scope | None:
    """The scope set by the innermost `acting_as`, if any."""
    return _acting.get()
