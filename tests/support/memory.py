"""Long-term memory over the test database, embedding through the scripted server."""

from __future__ import annotations

from typing import Any

from langchain_openai import OpenAIEmbeddings
from psycopg_pool import ConnectionPool

from recollect.longterm.facts import LongTermMemory
from recollect.longterm.supersession import ContradictionJudge
from tests.support.scripted_openai import ScriptedOpenAI


def scripted_embedder(server: ScriptedOpenAI) -> OpenAIEmbeddings:
    """The real OpenAI client; the server answers with hashed bag-of-words vectors."""
    return OpenAIEmbeddings(
        model="text-embedding-3-small",
        base_url=server.base_url,
        api_key="test",  # type: ignore[arg-type]
        check_embedding_ctx_length=False,
        max_retries=0,
    )


def memory_over(
    pool: ConnectionPool[Any],
    server: ScriptedOpenAI | None,
    judge: ContradictionJudge | None = None,
) -> LongTermMemory:
    """A store with the scripted embedder (or none, for lexical-only recall)."""
    embedder = scripted_embedder(server) if server is not None else None
    return LongTermMemory(pool, embedder=embedder, judge=judge)
