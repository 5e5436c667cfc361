"""Before the model is called, bring back the long-term memory that matters for this turn.

The query is the latest user message; the result replaces last turn's `recalled` items, so the
prompt always carries what is relevant now (with dates, so the model can discount old material).
The profile comes back for every turn, an empty or content-free message included; small talk
("thanks!", "ok cool", "jajaja") and stop-word-only messages bring back nothing else, from the
engine or from a store.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import psycopg
from langchain_core.messages import AnyMessage, HumanMessage
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore

from recollect.basestore.values import item_text
from recollect.longterm.facts import LongTermMemory
from recollect.longterm.recall import has_content
from recollect.longterm.records import Recollection, StoredFact
from recollect.prebuilt.run_context import context_of
from recollect.prebuilt.trace import note_recall
from recollect.state.agent_state import AgentState
from recollect.state.context import Context
from recollect.state.memory_state import RecalledItem
from recollect.store.apool import shared_async_pool
from recollect.store.errors import RecollectError
from recollect.store.offload import offloaded
from recollect.store.scope import Scope

log = logging.getLogger(__name__)

STORE_RECALL_LIMIT = 8
"""Items a store-backed recall brings into the prompt."""

MemorySource = LongTermMemory | Callable[[], LongTermMemory | None] | None
"""The engine itself, a lazy provider (for graphs compiled before a database exists), or none."""


def latest_user_text(messages: list[AnyMessage]) -> str:
    """The newest human message's text, or empty when there is none."""
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return message.text.strip()
    return ""


def shown_text(fact: StoredFact) -> str:
    """A fact's text, and for a plan the day it starts: "(from 2027-01-01)"."""
    if not fact.planned:
        return fact.text
    return f"{fact.text} (from {fact.valid_from.date().isoformat()})"


def as_items(found: Recollection) -> list[RecalledItem]:
    """Profile first (always), then facts and episodes in score order."""
    items: list[RecalledItem] = [
        RecalledItem(
            id=f"profile:{entry.key}",
            kind="profile",
            text=f"{entry.key}: {entry.value}",
            learned_at=entry.updated_at.isoformat() if entry.updated_at else "",
            score=1.0,
        )
        for entry in found.profile
    ]
    ranked: list[tuple[float, RecalledItem]] = [
        (
            r.score,
            RecalledItem(
                id=r.fact.id,
                kind=str(r.fact.category),
                text=shown_text(r.fact),
                learned_at=r.fact.learned_at.isoformat(),
                score=round(r.score, 4),
            ),
        )
        for r in found.facts
    ]
    ranked += [
        (
            e.score,
            RecalledItem(
                id=e.id,
                kind="episode",
                text=e.summary,
                learned_at=e.occurred_at.isoformat(),
                score=round(e.score, 4),
            ),
        )
        for e in found.episodes
    ]
    items += [item for _, item in sorted(ranked, key=lambda pair: -pair[0])]
    return items


def from_store(store: BaseStore, ctx: Context, query: str) -> list[RecalledItem]:
    """Recall through any `BaseStore` (`runtime.store`), from the user's `(org, user, "facts")`
    namespace, best first: what a graph built without the engine still gets."""
    items = store.search((ctx.org_id, ctx.user_id, "facts"), query=query, limit=STORE_RECALL_LIMIT)
    return [
        RecalledItem(
            id=item.key,
            kind=str(item.value.get("category") or "fact"),
            text=item_text(item.value),
            learned_at=str(item.value.get("learned_at") or item.updated_at.isoformat()),
            score=round(item.score, 4) if item.score is not None else 0.0,
        )
        for item in items
    ]


class RecallNode:
    """The `recall` node bound to a memory engine; without one, it searches `runtime.store`
    (so a fork that swaps in another `BaseStore` keeps its recall)."""

    def __init__(self, source: MemorySource) -> None:
        self._source = source
        self._opened: LongTermMemory | None = None

    def __call__(self, state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
        query = latest_user_text(list(state.get("messages", [])))
        store = runtime.store
        if store is not None and self._engine() is None:
            try:  # a graph built without the engine recalls from its store
                ctx = context_of(runtime)
                items = from_store(store, ctx, query) if has_content(query) else []
                return {"recalled": items}
            except (psycopg.Error, RecollectError) as exc:
                log.warning("recall failed (%s); answering without long-term memory", exc)
                return {"recalled": []}
        found = self.recollect(state, runtime)
        note_recall(state, found)
        return {"recalled": as_items(found) if found is not None else []}

    def _engine(self) -> LongTermMemory | None:
        source = self._source
        return source() if callable(source) else source

    async def _aengine(self) -> LongTermMemory | None:
        """The engine: a source that opens one blocks, so its first answer is fetched off the
        loop and kept (a hop to the executor on every turn cost every turn a queue wait)."""
        source = self._source
        if not callable(source):
            return source
        if self._opened is None:
            self._opened = await offloaded(source)
        return self._opened

    def recollect(self, state: AgentState, runtime: Runtime[Context]) -> Recollection | None:
        """The engine's recall for the latest user message; None without memory or query."""
        query = latest_user_text(list(state.get("messages", [])))
        if self._source is None:
            return None
        ctx = context_of(runtime)
        try:
            engine = self._engine()
            if engine is None:
                return None
            return engine.recall(
                Scope.for_user(ctx.org_id, ctx.user_id), query, token_budget=ctx.recall_tokens
            )
        except (psycopg.Error, RecollectError) as exc:  # an outage costs context, not the reply
            log.warning("recall failed (%s); answering without long-term memory", exc)
            return None

    async def acall(self, state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
        """The async twin: the engine's SQL is awaited on an async pool; embedding and
        reranking run on the bounded executor, off the server's event loop. Without an engine
        (a store, or nothing) the sync form runs on that executor."""
        try:
            engine = await self._aengine()
        except (psycopg.Error, RecollectError) as exc:
            log.warning("recall failed (%s); answering without long-term memory", exc)
            engine = None
            if runtime.store is None:
                return {"recalled": []}
        if engine is None:
            return await offloaded(self, state, runtime)
        found = await self._arecollect(engine, state, runtime)
        note_recall(state, found)
        return {"recalled": as_items(found) if found is not None else []}

    async def _arecollect(
        self, engine: LongTermMemory, state: AgentState, runtime: Runtime[Context]
    ) -> Recollection | None:
        query = latest_user_text(list(state.get("messages", [])))
        ctx = context_of(runtime)
        try:
            return await engine.arecall(
                await shared_async_pool(engine.pool),
                Scope.for_user(ctx.org_id, ctx.user_id),
                query,
                token_budget=ctx.recall_tokens,
            )
        except (psycopg.Error, RecollectError) as exc:  # an outage costs context, not the reply
            log.warning("recall failed (%s); answering without long-term memory", exc)
            return None
