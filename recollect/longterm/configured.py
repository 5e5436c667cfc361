"""The configured long-term memory engine: embedder and reranker as the environment names them.

Every entry point (the graph's process engine, `recollect chat`, `recollect demo`) builds its
engine here, so one setting (`RECOLLECT_EMBEDDINGS`, `RECOLLECT_RERANKER`) changes them all
alike. Models are cached per process by their factories: building a second engine is cheap.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from psycopg_pool import ConnectionPool

from recollect.longterm.embeddings import init_embeddings
from recollect.longterm.facts import LongTermMemory
from recollect.longterm.recipe import RecallRecipe
from recollect.longterm.rerankers import load_reranker

DEFAULT_RERANK_LIMIT = 40
"""How many fused candidates a configured reranker re-scores (measured in `bench.locomo`)."""


def configured_memory(
    pool: ConnectionPool[Any], *, recipe: RecallRecipe | None = None
) -> LongTermMemory:
    """A `LongTermMemory` over `pool` with the configured embedder (None: lexical recall)."""
    reranker = load_reranker()
    chosen = recipe or RecallRecipe()
    if reranker is not None and chosen.rerank_limit == 0:
        chosen = replace(chosen, rerank_limit=DEFAULT_RERANK_LIMIT)
    return LongTermMemory(pool, embedder=init_embeddings(), recipe=chosen, reranker=reranker)
