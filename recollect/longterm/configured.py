"""The configured long-term memory engine: embedder, reranker and supersession judge as the
environment names them.

Every entry point (the graph's process engine, the background worker, `recollect chat`,
`recollect demo`) builds its engine here, so one setting (`RECOLLECT_EMBEDDINGS`,
`RECOLLECT_RERANKER`, the chat model) changes them all alike. Whenever a chat model is
configured (`OPENAI_API_KEY`, `OPENAI_BASE_URL` or `RECOLLECT_MODEL`), it judges the
contradictions the cheap rule cannot place; offline, the rule judge does
(`recollect.longterm.rule_judge`; `RECOLLECT_JUDGE=rule` chooses it beside a model,
`RECOLLECT_JUDGE=none` turns judging off). Models are cached per process by their
factories: building a second engine is cheap.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any

from psycopg_pool import ConnectionPool

from recollect.longterm.facts import LongTermMemory
from recollect.longterm.recipe import RecallRecipe
from recollect.longterm.rerankers import load_reranker
from recollect.longterm.rule_judge import RuleJudge
from recollect.longterm.supersession import ContradictionJudge, ModelJudge
from recollect.models.embeddings import init_embeddings
from recollect.models.factory import OFFLINE_MODEL, chat_model, resolve_model_name

JUDGE_ENV = "RECOLLECT_JUDGE"

DEFAULT_RERANK_LIMIT = 40
"""How many fused candidates a configured reranker re-scores (measured in `bench.locomo`)."""


def configured_judge() -> ContradictionJudge | None:
    """The configured chat model as supersession judge; the rule judge offline."""
    choice = os.environ.get(JUDGE_ENV, "").strip()
    if choice == "none":
        return None
    if choice == "rule":
        return RuleJudge()
    name = resolve_model_name(choice)
    if name == OFFLINE_MODEL:
        return RuleJudge()
    return ModelJudge(chat_model(name))


def configured_memory(
    pool: ConnectionPool[Any], *, recipe: RecallRecipe | None = None
) -> LongTermMemory:
    """A `LongTermMemory` over `pool` with the configured embedder (None: lexical recall),
    reranker and judge."""
    reranker = load_reranker()
    chosen = recipe or RecallRecipe()
    if reranker is not None and chosen.rerank_limit == 0:
        chosen = replace(chosen, rerank_limit=DEFAULT_RERANK_LIMIT)
    return LongTermMemory(
        pool,
        embedder=init_embeddings(),
        recipe=chosen,
        reranker=reranker,
        judge=configured_judge(),
    )
