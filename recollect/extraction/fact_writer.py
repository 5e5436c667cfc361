"""Where accepted facts go: the long-term store's write path, behind a narrow interface.

The background job validates and writes a whole batch in one transaction (facts, verdicts,
and the mark that the messages were extracted), so the writer receives that transaction's
connection: a crash anywhere leaves nothing half-written, and a retry never writes twice.
"""

from __future__ import annotations

from typing import Any, Protocol

from langchain_core.embeddings import Embeddings
from psycopg import Connection
from psycopg_pool import ConnectionPool

from recollect.gate.injection_classifier import shares_vectors
from recollect.longterm.cues import says_plan
from recollect.longterm.facts import RETRACTION_KEY, LongTermMemory
from recollect.longterm.profile import updates_for
from recollect.longterm.records import NewFact, RememberAction, RememberResult
from recollect.store.scope import Scope


class FactWriter(Protocol):
    """The long-term store's write path (dedup, reinforcement, supersession, embedding)."""

    def remember(
        self,
        conn: Connection[Any],
        scope: Scope,
        fact: NewFact,
        *,
        vector: list[float] | None = None,
    ) -> str | None:
        """Store `fact` inside the caller's transaction; return the stored fact's id. `vector`:
        the offline e5 vector of `fact.text` when screening already computed it."""
        ...


class EngineWriter:
    """The long-term engine's write path, run in the caller's transaction: the fact is
    reinforced, superseded or inserted (embedded on the way, unless screening's vector of the
    same text is given and comes from the same model), and the user's profile gains the
    value (and loses the values of the facts it replaced) in the same commit; a retraction only
    takes values away, and a plan leaves the profile as it is until it happens."""

    def __init__(self, memory: LongTermMemory) -> None:
        self.memory = memory
        self.last: RememberResult | None = None
        """The last `remember`'s outcome (inserted, reinforced, superseded), for traces."""

    def remember(
        self,
        conn: Connection[Any],
        scope: Scope,
        fact: NewFact,
        *,
        vector: list[float] | None = None,
    ) -> str | None:
        # Screening's vector is kept only when this store embeds with the same model.
        kept = vector if shares_vectors(self.memory.embedder) else None
        result = self.memory.remember_in(conn, scope, fact, vector=kept)
        self.last = result
        if result.action is not RememberAction.INSERTED_STALE:
            # The profile follows the subject the write path settled on (inferred when the
            # extractor named none); a retraction or a plan changes no field's value yet.
            placed = fact.model_copy(update={"subject": result.fact.subject})
            quiet = bool(result.fact.metadata.get(RETRACTION_KEY)) or says_plan(fact.text)
            self.memory.update_profile_in(
                conn,
                scope,
                [] if quiet else updates_for(placed, result.fact.id),
                forget_fact_ids=result.replaced,
            )
        return result.fact.id


def default_writer(pool: ConnectionPool[Any], embedder: Embeddings | None = None) -> FactWriter:
    """The writer the worker, CLI and graphs use unless one is passed in: the configured
    engine (`RECOLLECT_EMBEDDINGS`), or one over `embedder` when it is given."""
    if embedder is None:
        from recollect.longterm.configured import configured_memory  # long_term imports facts

        return EngineWriter(configured_memory(pool))
    return EngineWriter(LongTermMemory(pool, embedder=embedder))
