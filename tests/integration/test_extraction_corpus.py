"""The labelled corpus through a whole background job and the real long-term engine (embedding
through the real OpenAI client to the scripted server): no raw PII in any table or in any text
sent to the embedder, no instruction or credential stored, every benign fact kept."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from psycopg import sql
from psycopg_pool import ConnectionPool

from recollect.extraction.fact_writer import EngineWriter
from recollect.extraction.queue import BufferedMessage, Debounce, enqueue
from recollect.extraction.worker import Worker, WorkerSettings
from recollect.store.scope import Scope
from recollect.store.server import CONNECTION_KWARGS
from tests.support.db import superuser_conninfo
from tests.support.extraction import fact
from tests.support.fact_corpus import BENIGN, INJECTIONS, PII
from tests.support.memory import memory_over
from tests.support.scripted_openai import ScriptedOpenAI

SCOPE = Scope.for_user("acme", "corpus")


def _every_row_as_text(pool: ConnectionPool[Any]) -> str:
    """As the superuser: row-level security must not hide anything from this check."""
    with psycopg.connect(superuser_conninfo(pool), **CONNECTION_KWARGS) as conn:
        tables = [
            r["tablename"]
            for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        ]
        dump = [
            str(row)
            for table in tables
            for row in conn.execute(
                sql.SQL("SELECT t::text FROM {} AS t").format(sql.Identifier(table))
            )
        ]
    return "\n".join(dump)


def test_corpus_through_the_write_path(
    pool: ConnectionPool[Any],
    worker_pool: ConnectionPool[Any],
    scripted_llm: ScriptedOpenAI,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RECOLLECT_MAX_FACTS_PER_CATEGORY", "1000")
    texts = [text for text, _ in PII] + list(INJECTIONS) + list(BENIGN)
    messages = [BufferedMessage(f"m-{n}", "user", text) for n, text in enumerate(texts)]
    enqueue(pool, SCOPE, "t-corpus", messages, debounce=Debounce(0, 1))
    scripted_llm.reply_json(
        {"facts": [fact(text, sources=[f"m-{n}"]) for n, text in enumerate(texts)]}
    )
    memory = memory_over(pool, scripted_llm)
    worker = Worker(worker_pool, EngineWriter(memory), WorkerSettings(backoff_s=0))
    [outcome] = worker.drain()
    assert outcome.status == "done"
    everything = _every_row_as_text(pool)
    stored = [f.text for f in memory.facts(SCOPE)]
    embedded = [
        text
        for request in scripted_llm.embedding_requests
        for text in ([request["input"]] if isinstance(request["input"], str) else request["input"])
    ]
    assert len(embedded) >= len(stored) > 0, "every stored fact went through the embedder"
    assert all(isinstance(text, str) for text in embedded)
    leaked_to_tables = [raw for _, raw in PII if raw in everything]
    leaked_to_store = [raw for _, raw in PII if any(raw in text for text in embedded)]
    injections_stored = [text for text in INJECTIONS if text in stored]
    benign_kept = [text for text in BENIGN if text in stored]
    print(
        f"\nwrite path: {len(PII)} PII facts -> {len(leaked_to_tables)} raw values in any table, "
        f"{len(leaked_to_store)} in {len(embedded)} embedding inputs; "
        f"{len(INJECTIONS)} injections -> {len(injections_stored)} stored; "
        f"{len(BENIGN)} benign -> {len(benign_kept)} stored"
    )
    assert leaked_to_tables == []
    assert leaked_to_store == []
    assert injections_stored == []
    assert benign_kept == list(BENIGN)
    credentials = [text for text, raw in PII if raw.startswith(("sk-", "AKIA"))]  # refused
    assert outcome.stored == len(PII) - 1 - len(credentials) + len(BENIGN)  # one is a duplicate
    assert outcome.rejected == len(INJECTIONS) + 1 + len(credentials)
