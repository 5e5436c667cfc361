"""`langgraph dev`: what a caller sets in `context` is bounded, and a refusal costs nothing.

With a real (scripted) model configured, Alice asks for other models, huge budgets, a thousand
workers, a book-length system prompt — in a run's context, its config, a cron and an assistant.
Each is one 422 line, and the model server, the trace table and the job queue saw nothing; so
it is for runs on another user's thread, or refused for who asks or what they carry. A model on
the deployment's allow-list is used.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import psycopg
import pytest
from langgraph_sdk.errors import APIStatusError

from recollect.store.server import CONNECTION_KWARGS
from tests.support.langgraph_dev import ALICE_KEY, BOB_KEY, GINA_KEY, MARIA_KEY, client_for
from tests.support.scripted_openai import ScriptedOpenAI

HELLO = {"messages": [{"role": "human", "content": "hi"}]}
EXTRA_MODEL = "openai:gpt-4.1-nano"
OUT_OF_BOUNDS: list[dict[str, Any]] = [
    {"model": "anthropic:claude-opus-4"},
    {"model": "openai:o3-pro"},
    {"context_tokens": 10**9},
    {"recall_tokens": "lots"},
    {"max_history_tokens": 0},
    {"summary_max_tokens": 1e6},
    {"per_worker_tokens": 100_000},
    {"max_workers": 1000},
    {"worker_max_steps": 500},
    {"min_confidence": 2},
    {"extract_every_turns": True},
    {"system_prompt": "x" * 100_000},
]


@pytest.fixture(scope="module")
def served_env(_scripted_server: ScriptedOpenAI) -> dict[str, str]:
    return {
        "OPENAI_BASE_URL": _scripted_server.base_url,
        "OPENAI_API_KEY": "test-key",
        "RECOLLECT_MODEL_MAX_RETRIES": "0",
        "RECOLLECT_ALLOWED_MODELS": EXTRA_MODEL,
    }


@pytest.fixture
def scripted(_scripted_server: ScriptedOpenAI) -> Iterator[ScriptedOpenAI]:
    """The module server's model, with nothing scripted or seen yet."""
    _scripted_server.reset()
    yield _scripted_server
    _scripted_server.reset()


def _refusal(call: Callable[[], Any]) -> tuple[int, str]:
    try:
        call()
    except (APIStatusError, httpx.HTTPStatusError) as exc:
        return exc.response.status_code, exc.response.text
    raise AssertionError("the call succeeded")


def _rows(database_uri: str, table: str) -> int:
    with psycopg.connect(database_uri, **CONNECTION_KWARGS) as conn:
        row = conn.execute(f"SELECT count(*) AS n FROM {table}").fetchone()
    assert row is not None
    return int(row["n"])


def test_out_of_bounds_context_is_refused_before_any_work(
    served_module: str, module_database_uri: str, scripted: ScriptedOpenAI
) -> None:
    alice = client_for(served_module, ALICE_KEY)
    thread = alice.threads.create()["thread_id"]
    crons, assistants = alice.crons.count(), alice.assistants.count()
    for context in OUT_OF_BOUNDS:
        graph = "orchestrator" if "worker" in str(context) else "agent"
        for call in (
            lambda c=context, g=graph: alice.runs.wait(thread, g, input=HELLO, context=c),
            lambda c=context: alice.runs.wait(
                thread, "agent", input=HELLO, config={"configurable": c}
            ),
            lambda c=context: alice.crons.create("agent", schedule="0 0 1 1 *", context=c),
            lambda c=context: alice.assistants.create("agent", context=c),
        ):
            status, text = _refusal(call)
            assert status == 422, (context, text)
            assert "context." in text, text
            assert len(text) < 400, text
    assert scripted.requests == []
    assert alice.runs.list(thread) == []
    assert (alice.crons.count(), alice.assistants.count()) == (crons, assistants)
    assert _rows(module_database_uri, "memory_traces") == 0
    assert _rows(module_database_uri, "memory_jobs") == 0


def test_a_refused_run_costs_nothing(
    served_module: str, module_database_uri: str, scripted: ScriptedOpenAI
) -> None:
    """Runs on another's thread (by a colleague, another organisation, a reviewer) and runs
    refused for what they carry: no model call, no trace, no extraction job, no run."""
    alice = client_for(served_module, ALICE_KEY)
    bob, gina, maria = (client_for(served_module, k) for k in (BOB_KEY, GINA_KEY, MARIA_KEY))
    thread = alice.threads.create()["thread_id"]
    before = {t: _rows(module_database_uri, t) for t in ("memory_traces", "memory_jobs")}
    huge = {"messages": [{"role": "human", "content": "x" * 200_000}]}
    refused: list[Callable[[], Any]] = [
        lambda: bob.runs.wait(thread, "agent", input=HELLO),
        lambda: bob.runs.create(thread, "agent", input=HELLO),
        lambda: list(bob.runs.stream(thread, "agent", input=HELLO)),
        lambda: bob.runs.wait(thread, "memory", input={"thread_id": thread}),
        lambda: gina.runs.wait(thread, "agent", input=HELLO),
        lambda: maria.runs.wait(thread, "agent", input=HELLO),
        lambda: alice.runs.wait(thread, "agent", input=HELLO, context={"user_id": "bob"}),
        lambda: alice.runs.wait(thread, "agent", input=huge),
    ]
    for call in refused:
        status, text = _refusal(call)
        assert status in (403, 404, 413), text
    assert scripted.requests == []
    assert alice.runs.list(thread) == []
    with psycopg.connect(module_database_uri, **CONNECTION_KWARGS) as conn:
        for table in ("memory_traces", "memory_jobs"):
            row = conn.execute(
                f"SELECT count(*) AS n FROM {table} WHERE thread_id = %s", (thread,)
            ).fetchone()
            assert row == {"n": 0}, table
    assert {t: _rows(module_database_uri, t) for t in before} == before


def test_a_model_on_the_allow_list_is_used(served_module: str, scripted: ScriptedOpenAI) -> None:
    scripted.reply("hello from the allowed model")
    alice = client_for(served_module, ALICE_KEY)
    thread = alice.threads.create()["thread_id"]
    reply = alice.runs.wait(
        thread, "agent", input=HELLO, context={"model": EXTRA_MODEL, "extraction": False}
    )
    assert isinstance(reply, dict)
    assert reply["messages"][-1]["content"] == "hello from the allowed model"
    assert [r["model"] for r in scripted.chat_requests] == ["gpt-4.1-nano"]
