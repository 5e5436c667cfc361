"""Failures no retry can fix park the job at once with what to set; a worker runs only the
models it has, and leaves the others' jobs pending."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg_pool import ConnectionPool

from graphs.agent import make_graph
from recollect import thread_config, user_turn
from recollect.extraction import queue as jobs
from recollect.extraction.worker import Worker, WorkerSettings
from recollect.models.factory import DEFAULT_OPENAI_MODEL, OFFLINE_MODEL
from recollect.state.context import Context
from recollect.store.pool import use_pool
from tests.support.db import all_rows
from tests.support.extraction import TableWriter, fact, remembered
from tests.support.scripted_openai import ScriptedOpenAI

NOW = Context(org_id="acme", user_id="dana", extract_every_turns=1, extract_after_idle_s=60)
FAST = WorkerSettings(max_attempts=5, backoff_s=0.0, lease_s=30, poll_s=0.05, timeout_s=5)


@pytest.fixture
def app(worker_pool: ConnectionPool[Any]) -> Iterator[ConnectionPool[Any]]:
    """The worker role's pool (a member of the app role, and the one that claims jobs)."""
    with use_pool(worker_pool):
        yield worker_pool


def _queue_a_turn(checkpointer: PostgresSaver, scripted_llm: ScriptedOpenAI, thread: str) -> None:
    scripted_llm.reply("Noted.")
    make_graph(checkpointer=checkpointer).invoke(
        user_turn("I prefer tea"), config=thread_config(thread), context=NOW
    )


def _job(pool: ConnectionPool[Any]) -> dict[str, Any]:
    [job] = all_rows(pool, "SELECT * FROM memory_jobs")
    return job


def test_a_job_without_credentials_is_parked_after_one_attempt_then_retried_once_set(
    app: ConnectionPool[Any],
    checkpointer: PostgresSaver,
    scripted_llm: ScriptedOpenAI,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _queue_a_turn(checkpointer, scripted_llm, "t-nokey")
    assert _job(app)["model"] == DEFAULT_OPENAI_MODEL  # queued for the model that answered
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.delenv("OPENAI_BASE_URL")

    [outcome] = Worker(app, TableWriter(app), FAST).drain()

    assert outcome.status == "dead"
    assert outcome.parked
    assert outcome.error == (
        f"no credentials for {DEFAULT_OPENAI_MODEL}: set OPENAI_API_KEY (or OPENAI_BASE_URL "
        "for a compatible server), then run `recollect memory jobs --retry`"
    )
    job = _job(app)
    assert (job["status"], job["attempts"], job["last_error"]) == ("dead", 1, outcome.error)
    assert len(scripted_llm.chat_requests) == 1  # only the reply: extraction never called
    pending = all_rows(app, "SELECT * FROM memory_job_messages WHERE extracted_at IS NULL")
    assert len(pending) == 2, "the turn waits for the retry"

    monkeypatch.setenv("OPENAI_BASE_URL", scripted_llm.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    with app.connection() as conn:
        assert jobs.retry_all_dead(conn) == [job["id"]]
    scripted_llm.reply_json({"facts": [fact("Prefers tea")]})
    [again] = Worker(app, TableWriter(app), FAST).drain()
    assert (again.status, again.stored) == ("done", 1)
    assert [r["text"] for r in remembered(app)] == ["Prefers tea"]


@pytest.mark.parametrize(
    ("status", "error_type", "expected_status", "says"),
    [
        (401, None, "dead", "refused the API key"),
        (403, None, "dead", "may not use"),
        (404, "model_not_found", "dead", "does not know the model"),
        (500, None, "pending", "Error code: 500"),
        (429, None, "pending", "Error code: 429"),
    ],
    ids=["auth", "permission", "unknown-model", "server-error", "rate-limit"],
)
def test_only_failures_a_retry_cannot_fix_are_parked(
    app: ConnectionPool[Any],
    checkpointer: PostgresSaver,
    scripted_llm: ScriptedOpenAI,
    status: int,
    error_type: str | None,
    expected_status: str,
    says: str,
) -> None:
    _queue_a_turn(checkpointer, scripted_llm, f"t-{status}")
    scripted_llm.reply_error(status, "scripted refusal", error_type=error_type)
    outcome = Worker(app, TableWriter(app), FAST).run_once()
    assert outcome is not None
    assert outcome.status == expected_status
    assert outcome.parked == (expected_status == "dead")
    assert says in (outcome.error or "")
    assert _job(app)["attempts"] == 1


def test_a_worker_leaves_jobs_for_a_model_it_does_not_have(
    app: ConnectionPool[Any], checkpointer: PostgresSaver, scripted_llm: ScriptedOpenAI
) -> None:
    _queue_a_turn(checkpointer, scripted_llm, "t-theirs")
    offline_only = Worker(app, TableWriter(app), FAST, models=frozenset({OFFLINE_MODEL}))
    assert offline_only.drain(ignore_debounce=True) == []
    job = _job(app)
    assert (job["status"], job["attempts"], job["last_error"]) == ("pending", 0, None)

    scripted_llm.reply_json({"facts": [fact("Prefers tea")]})
    having = Worker(app, TableWriter(app), FAST, models=frozenset({DEFAULT_OPENAI_MODEL}))
    assert [o.status for o in having.drain()] == ["done"]


def test_a_job_for_the_default_model_is_run_by_any_worker(
    app: ConnectionPool[Any], checkpointer: PostgresSaver, scripted_llm: ScriptedOpenAI
) -> None:
    _queue_a_turn(checkpointer, scripted_llm, "t-default")
    with app.connection() as conn:
        conn.execute("UPDATE memory_jobs SET model = ''")  # as queued before models were named
    scripted_llm.reply_json({"facts": []})
    worker = Worker(app, TableWriter(app), FAST, models=frozenset({DEFAULT_OPENAI_MODEL}))
    assert [o.status for o in worker.drain()] == ["done"]
