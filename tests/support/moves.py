"""A user who moves: the second city replaces the first through the write path."""

from __future__ import annotations

from recollect.longterm.facts import LongTermMemory
from recollect.longterm.records import FactCategory, NewFact, RememberAction, StoredFact
from recollect.store.scope import Scope


def move_from_lisbon_to_porto(
    memory: LongTermMemory, scope: Scope
) -> tuple[StoredFact, StoredFact]:
    """Remember "lives in Lisbon", then "lives in Porto", which supersedes it; both facts."""
    first = memory.remember(
        scope, NewFact(text="Ana lives in Lisbon", category=FactCategory.BIOGRAPHICAL)
    )
    moved = memory.remember(
        scope, NewFact(text="Ana lives in Porto", category=FactCategory.BIOGRAPHICAL)
    )
    assert moved.action is RememberAction.SUPERSEDED
    assert first.fact.id in moved.replaced
    return first.fact, moved.fact
