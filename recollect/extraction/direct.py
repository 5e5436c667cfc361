"""Facts the agent itself asks to keep or drop (its memory tools), held to the same rules as
extracted ones: the same screening, redaction and validation (`FactScreen`), then the same
write path (`EngineWriter`: reinforce, supersede, profile) in one tenant-scoped transaction.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from recollect.extraction.fact_writer import EngineWriter
from recollect.extraction.validation import FactScreen, ValidationPolicy
from recollect.longterm.facts import LongTermMemory
from recollect.longterm.records import FactCategory, NewFact
from recollect.store.scope import Scope
from recollect.store.tenancy import scoped

AGENT_CONFIDENCE = 0.9
"""The agent was told it plainly, but a model relayed it: not quite a first-hand 1.0."""


@dataclass(frozen=True)
class Kept:
    """What became of one `remember_now`: stored (with the fact's id) or refused, and why."""

    stored: bool
    fact_id: str | None
    text: str
    """As stored: redacted where screening redacted it."""
    reasons: tuple[str, ...]


def remember_now(
    memory: LongTermMemory,
    scope: Scope,
    text: str,
    category: str,
    *,
    policy: ValidationPolicy | None = None,
) -> Kept:
    """Screen `text` like an extracted fact and, if accepted, write it now."""
    folded = "_".join(category.strip().lower().replace("-", " ").split())
    verdict = FactScreen(policy or ValidationPolicy.from_env()).check(text, folded)
    if not verdict.accepted:
        return Kept(False, None, verdict.text, verdict.reasons)
    fact = NewFact(
        text=verdict.text,
        category=FactCategory(folded),
        confidence=AGENT_CONFIDENCE,
        metadata={"source": "agent"},
    )
    with scoped(memory.pool, scope) as conn:
        fact_id = EngineWriter(memory).remember(conn, scope, fact, vector=verdict.embedding)
    memory.persist_encodings(scope)
    return Kept(True, fact_id, verdict.text, verdict.reasons)


def forget_now(memory: LongTermMemory, scope: Scope, fact_id: str) -> bool:
    """Soft-delete one live fact of `scope` and drop its profile values; False if none."""
    try:
        uuid.UUID(fact_id)
    except ValueError:
        return False
    if not memory.forget(scope, fact_id):
        return False
    with scoped(memory.pool, scope) as conn:
        memory.update_profile_in(conn, scope, [], forget_fact_ids=[fact_id])
    return True
