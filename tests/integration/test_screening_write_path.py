"""The screening corpus (`tests/data/screening/`) through a whole background job and the real
long-term engine, the embedder behind the real OpenAI client and the scripted server: no raw
PII in any table (facts, profile, candidates, episodes) or in any text sent to the embedder,
injection recall and benign false alarms within bounds, for the tuning and held-out parts."""

from __future__ import annotations

from typing import Any

import pytest
from psycopg_pool import ConnectionPool

from recollect.extraction.fact_writer import EngineWriter
from recollect.extraction.queue import BufferedMessage, Debounce, enqueue
from recollect.extraction.validation import normalise
from recollect.extraction.worker import Worker, WorkerSettings
from recollect.gate.normalise import canonical
from recollect.store.scope import Scope
from tests.integration.test_extraction_corpus import _every_row_as_text
from tests.support.extraction import fact
from tests.support.memory import memory_over
from tests.support.screening_corpus import BENIGN, INJECTIONS, PII
from tests.support.scripted_openai import ScriptedOpenAI

SCOPE = Scope.for_user("acme", "screening")
CHUNK = 150


def test_screening_corpus_through_the_write_path(
    pool: ConnectionPool[Any],
    worker_pool: ConnectionPool[Any],
    scripted_llm: ScriptedOpenAI,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RECOLLECT_MAX_FACTS_PER_CATEGORY", "1000")
    cases = [*PII, *INJECTIONS, *BENIGN]
    memory = memory_over(pool, scripted_llm)
    for first in range(0, len(cases), CHUNK):  # one job reads at most 200 messages
        chunk = list(enumerate(cases))[first : first + CHUNK]
        messages = [BufferedMessage(f"m-{n}", "user", case.text) for n, case in chunk]
        enqueue(pool, SCOPE, f"t-{first}", messages, debounce=Debounce(0, 1))
        scripted_llm.reply_json(
            {"facts": [fact(case.text, sources=[f"m-{n}"]) for n, case in chunk]}
        )
        worker = Worker(worker_pool, EngineWriter(memory), WorkerSettings(backoff_s=0))
        [outcome] = worker.drain()
        assert outcome.status == "done"
    everything = _every_row_as_text(pool)
    # Everything the gate let through, live or since superseded by a later fact of the corpus.
    stored = {f.text for f in memory.facts(SCOPE, include_superseded=True)}
    embedded = [
        text
        for request in scripted_llm.embedding_requests
        for text in ([request["input"]] if isinstance(request["input"], str) else request["input"])
    ]
    assert len(embedded) >= len(stored) > 0, "every stored fact went through the embedder"
    report = []
    for split in ("tune", "holdout"):
        raws = [raw for case in PII if case.split == split for raw in case.raw]
        forms = {form for raw in raws for form in (raw, canonical(raw))}
        in_tables = [raw for raw in forms if raw in everything]
        in_embeddings = [raw for raw in forms if any(raw in text for text in embedded)]
        injections = [c.text for c in INJECTIONS if c.split == split]
        injections_stored = [t for t in injections if normalise(t) in stored or t in stored]
        benign = [c.text for c in BENIGN if c.split == split]
        benign_lost = [t for t in benign if normalise(t) not in stored]
        report.append(
            f"{split}: {len(raws)} PII values -> {len(in_tables)} in tables, "
            f"{len(in_embeddings)} in embeddings; {len(injections)} injections -> "
            f"{len(injections_stored)} stored; {len(benign)} benign -> {len(benign_lost)} lost"
        )
        assert in_tables == [], [
            line for line in everything.splitlines() if any(r in line for r in in_tables)
        ][:5]
        assert in_embeddings == []
        assert len(injections_stored) <= 0.03 * len(injections), injections_stored
        assert len(benign_lost) <= 0.02 * len(benign), benign_lost
    print("\nwrite path: " + "; ".join(report) + f"; {len(embedded)} embedding inputs")
