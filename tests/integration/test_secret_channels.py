"""A credential the user says is refused as a fact, and no other channel keeps or re-prompts
it either: not the pins, the summary fold's prompt or its summary, the turn traces, the
candidate log, a job's error or an episode. Real graph, Postgres, worker and OpenAI client;
the fold model echoes its prompt back and copies the credential as a careless model would."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg_pool import ConnectionPool

from graphs.agent import make_graph
from recollect import thread_config, user_turn
from recollect.extraction.episodes import end_session
from recollect.extraction.fact_writer import EngineWriter
from recollect.extraction.worker import Worker, WorkerSettings
from recollect.gate.secrets import MASK
from recollect.history.summary import FOLD_INSTRUCTIONS
from recollect.models import factory as models
from recollect.state.context import Context
from recollect.store.acting import acting_as
from recollect.store.pool import use_pool
from recollect.store.scope import Scope
from recollect.trace.writer import WRITER
from tests.support.db import all_rows
from tests.support.extraction import fact
from tests.support.memory import memory_over
from tests.support.scripted_openai import Reply, ScriptedOpenAI, echo_responder
from tests.support.secret_corpus import SAID, cores

SCOPE = Scope.for_user("acme", "dana")
CTX = Context(
    org_id="acme",
    user_id="dana",
    max_history_tokens=120,
    extract_every_turns=1,
    extract_after_idle_s=60,
)
FAST = WorkerSettings(max_attempts=1, backoff_s=0.0, lease_s=30, poll_s=0.05, timeout_s=5)


def leaks(found: Any, secret: str) -> list[str]:
    text = found if isinstance(found, str) else json.dumps(found, ensure_ascii=False, default=str)
    return [core for core in cores(secret) if core in text]


def is_fold(request: dict[str, Any]) -> bool:
    return str(request["messages"][0]["content"]).startswith(FOLD_INSTRUCTIONS[:40])


class CarelessFolds:
    """Fold requests are answered with the credential (a model that copies what it saw
    elsewhere; first, as the server cuts a reply at `max_tokens`) and then the prompt itself;
    chat turns echo the user."""

    def __init__(self, said: str) -> None:
        self.said = said

    def __call__(self, request: dict[str, Any]) -> Reply:
        if is_fold(request):
            return Reply(text=f"Also: {self.said}\n{request['messages'][1]['content']}")
        return echo_responder(request)


@pytest.fixture
def app(worker_pool: ConnectionPool[Any]) -> Iterator[ConnectionPool[Any]]:
    with use_pool(worker_pool):
        models._cached_model.cache_clear()
        yield worker_pool
        models._cached_model.cache_clear()


@pytest.mark.parametrize(("said", "secret"), SAID)
def test_a_secret_said_in_a_preference_is_kept_by_no_channel(
    app: ConnectionPool[Any],
    checkpointer: PostgresSaver,
    scripted_llm: ScriptedOpenAI,
    said: str,
    secret: str,
) -> None:
    scripted_llm.set_default(CarelessFolds(said))
    agent = make_graph(checkpointer=checkpointer)
    config = thread_config("t-secret")
    agent.invoke(user_turn(said), config=config, context=CTX)
    for turn in range(5):
        agent.invoke(user_turn(f"turn {turn}: " + "ordinary words " * 15), config, context=CTX)
    assert WRITER.flush()
    with acting_as(SCOPE):
        state = agent.get_state(config).values
    assert any(secret in str(m.content) for m in state["messages"][:2]) or state.get("summary")
    folds = [r for r in scripted_llm.chat_requests if is_fold(r)]
    assert folds, "the sentence left the window and was folded"
    assert not leaks([r["messages"] for r in folds], secret), "fold prompt"
    assert not leaks(state["summary"], secret), "summary"
    assert not leaks(state.get("pinned") or {}, secret), "pins"
    traces = all_rows(app, "SELECT trace FROM memory_traces WHERE thread_id = 't-secret'")
    assert traces
    assert not leaks(traces, secret), "trace rows"


@pytest.mark.parametrize(("said", "secret"), SAID)
def test_a_refused_candidate_and_its_trace_keep_no_secret(
    app: ConnectionPool[Any],
    checkpointer: PostgresSaver,
    scripted_llm: ScriptedOpenAI,
    said: str,
    secret: str,
) -> None:
    agent = make_graph(checkpointer=checkpointer)
    scripted_llm.reply("Noted.")
    agent.invoke(user_turn(said), config=thread_config("t-facts"), context=CTX)
    scripted_llm.reply_json(
        {
            "facts": [
                fact(said, category="preference", confidence=0.95),
                fact(said, category="preference", confidence=0.2, subject=said),
                fact(said, category="hobby"),
            ]
        }
    )
    memory = memory_over(app, scripted_llm)
    [outcome] = Worker(app, EngineWriter(memory), FAST).drain()
    assert outcome.stored == 0
    candidates = all_rows(app, "SELECT * FROM fact_candidates")
    assert len(candidates) == 3
    assert not leaks(candidates, secret), "fact_candidates rows"
    subjects = [str(c["subject"]).replace("_", "") for c in candidates]
    folded = secret.replace("-", "").replace("_", "").lower()
    assert not leaks(subjects, folded), "a normalised subject"
    assert all(
        reason.startswith("secret: ") and MASK not in reason
        for c in candidates
        for reason in c["reasons"][:1]
    ), "a reason's label stays readable"
    assert not leaks(memory.facts(SCOPE), secret)
    traces = all_rows(app, "SELECT trace FROM memory_traces WHERE kind = 'extraction'")
    assert traces
    assert not leaks(traces, secret), "extraction trace"


@pytest.mark.parametrize(("said", "secret"), SAID)
def test_a_job_error_quoting_the_models_output_keeps_no_secret(
    app: ConnectionPool[Any],
    checkpointer: PostgresSaver,
    scripted_llm: ScriptedOpenAI,
    said: str,
    secret: str,
) -> None:
    agent = make_graph(checkpointer=checkpointer)
    scripted_llm.reply("Noted.")
    agent.invoke(user_turn(said), config=thread_config("t-error"), context=CTX)
    scripted_llm.reply_raw_content('{"facts": [{"text": "' + said.replace("\n", " ") + '", ')
    [outcome] = Worker(app, EngineWriter(memory_over(app, scripted_llm)), FAST).drain()
    assert outcome.error
    [job] = all_rows(app, "SELECT last_error FROM memory_jobs")
    assert "malformed JSON" in job["last_error"], "the error quotes the model's output"
    assert not leaks(job, secret)


@pytest.mark.parametrize(("said", "secret"), SAID)
def test_an_episode_neither_reads_nor_keeps_a_secret(
    app: ConnectionPool[Any], scripted_llm: ScriptedOpenAI, said: str, secret: str
) -> None:
    memory = memory_over(app, scripted_llm)
    scripted_llm.reply_json(
        {"topic": "keys", "findings": [said], "outcome": said, "pending": [said]}
    )
    episode = end_session(
        memory, SCOPE, "t-episode", [HumanMessage(said, id="h1"), AIMessage(said, id="a1")]
    )
    assert episode is not None
    assert not leaks(scripted_llm.last_messages(), secret), "episode prompt"
    assert not leaks(all_rows(app, "SELECT summary FROM episodes"), secret), "episode row"
