"""The orchestrator over real Postgres and the real OpenAI client (scripted server): workers
run in their own message lists, results merge, checkpoints stay bounded, and learned facts take
the chat turns' extraction path."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from psycopg_pool import ConnectionPool

from graphs.orchestrator import make_graph
from recollect import thread_config
from recollect.extraction.worker import Worker, WorkerSettings
from recollect.history.owned_checkpoints import ScopedPostgresSaver
from recollect.longterm.records import FactCategory, NewFact
from recollect.state.context import Context
from recollect.store.acting import acting_as
from recollect.store.pool import use_pool
from recollect.store.scope import Scope
from recollect.store.tenancy import scoped
from tests.support.extraction import fact, is_extraction
from tests.support.memory import memory_over
from tests.support.scripted_openai import JsonDict, Reply, ScriptedOpenAI, ToolCall

SCOPE = Scope.for_user("acme", "ana")
CONTEXT = Context(org_id="acme", user_id="ana", extract_every_turns=1, extract_after_idle_s=0)
SEARCH_CALL_ID = "call-deep-search-1"
SEARCH_MARKER = "[s1.1]"
INTERMEDIATE = "INTERMEDIATE-REPLY-OF"
SUBTASKS = ["Find the venue", "Check the budget in depth", "List dietary needs"]
_SHOWN = re.compile(r"^- \[([^\]]+)\] (.+)$", re.MULTILINE)


def _tools(request: JsonDict) -> list[str]:
    return [(t.get("function") or {}).get("name", "") for t in request.get("tools") or []]


def _text(message: JsonDict) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else ""


def responder(request: JsonDict) -> Reply:
    """Plan: three subtasks. The `in depth` worker searches once (a two-call branch), the
    others answer at once. Reports cite what each worker was shown, one invented id, and a
    fact every worker repeats. Extraction turns `worker` lines into facts."""
    tools, messages = _tools(request), request["messages"]
    if is_extraction(request):
        excerpt = messages[-1]["content"]
        found = re.findall(r"^\[([^\]]+)\] worker: (.+?) \(sources", excerpt, re.MULTILINE)
        facts = [fact(f"Team offsite: {text}", sources=[mid]) for mid, text in found]
        return Reply(json=json.dumps({"facts": facts}))
    if "Plan" in tools:
        plan = {"subtasks": [{"task": t, "keys": ["budget"]} for t in SUBTASKS]}
        return Reply(json=json.dumps(plan))
    task = next(_text(m) for m in messages if m["role"] == "user")
    if "WorkerReport" in tools:
        shown = _SHOWN.findall(_text(messages[0]))
        facts = [{"text": text, "sources": [sid]} for sid, text in shown if sid != "board:task"]
        facts.append({"text": "The budget is 1200 EUR.", "sources": ["board:budget"]})
        facts.append({"text": "Made up", "sources": ["zz9"]})
        report = {"summary": f"done: {task}", "facts": facts, "open_questions": []}
        return Reply(json=json.dumps(report))
    if "search_memory" in tools:
        searched = any(m["role"] == "tool" for m in messages)
        if "in depth" in task and not searched:
            call = ToolCall("search_memory", {"query": "budget"}, id=SEARCH_CALL_ID)
            return Reply(tool_calls=(call,))
        return Reply(text=f"{INTERMEDIATE} {task}")
    return Reply(text="FINAL ANSWER")


@pytest.fixture
def memory(pool: ConnectionPool[Any], scripted_llm: ScriptedOpenAI) -> Any:
    scripted_llm.set_default(responder)
    engine = memory_over(pool, scripted_llm)
    for text in ("Ana is vegetarian", "The offsite budget was approved by finance", "Lisbon"):
        engine.remember(SCOPE, NewFact(text=text, category=FactCategory.PREFERENCE))
    return engine


def checkpoint_bytes(pool: ConnectionPool[Any], thread: str) -> bytes:
    """Every byte the checkpointer stored for the thread: checkpoints, blobs, writes."""
    with scoped(pool, SCOPE) as conn:  # checkpoints sit behind row-level security
        parts = [
            str(r["c"]).encode()
            for r in conn.execute(
                "SELECT checkpoint::text || metadata::text AS c FROM checkpoints "
                "WHERE thread_id = %s",
                (thread,),
            )
        ]
        parts += [
            bytes(r["b"] or b"")
            for r in conn.execute(
                "SELECT blob AS b FROM checkpoint_blobs WHERE thread_id = %s", (thread,)
            )
        ]
        parts += [
            bytes(r["b"] or b"")
            for r in conn.execute(
                "SELECT blob AS b FROM checkpoint_writes WHERE thread_id = %s", (thread,)
            )
        ]
    return b"\n".join(parts)


def test_no_worker_message_reaches_the_checkpointed_state(
    pool: ConnectionPool[Any], memory: Any, scripted_llm: ScriptedOpenAI
) -> None:
    graph = make_graph(checkpointer=ScopedPostgresSaver(pool), memory=memory)
    with use_pool(pool):
        out = graph.invoke(
            {"task": "Plan the offsite", "blackboard": {"budget": "1200 EUR"}},
            config=thread_config("orch-1"),
            context=CONTEXT,
        )
    assert out["answer"] == "FINAL ANSWER"
    assert [r["worker_id"] for r in out["results"]] == ["w1", "w2", "w3"]
    assert [r["steps"] for r in out["results"]] == [1, 2, 1], "branches of different lengths"
    tool_results = [
        m for r in scripted_llm.chat_requests for m in r["messages"] if m["role"] == "tool"
    ]
    assert any(SEARCH_MARKER in _text(m) for m in tool_results), "the worker did search"
    stored = checkpoint_bytes(pool, "orch-1")
    assert b"done: Find the venue" in stored, "the handoffs are checkpointed"
    for leaked in (SEARCH_CALL_ID, SEARCH_MARKER, INTERMEDIATE, "You are one researcher"):
        assert leaked.encode() not in stored, f"{leaked!r} leaked into the checkpoint"
    budget = [f for f in out["facts"] if f["text"].startswith("The budget is")]
    assert len(budget) == 1
    assert budget[0]["workers"] == ["w1", "w2", "w3"]
    assert all("zz9" not in f["sources"] for f in out["facts"]), "invented ids are dropped"
    assert all(r["context_tokens"] <= CONTEXT.per_worker_tokens + 400 for r in out["results"])


def test_a_finished_orchestrated_thread_stays_within_the_agents_retention_bounds(
    pool: ConnectionPool[Any], memory: Any
) -> None:
    saver = ScopedPostgresSaver(pool)
    saver.retain = 2
    graph = make_graph(checkpointer=saver, memory=memory)
    sizes = []
    with use_pool(pool):
        for n in range(6):
            graph.invoke({"task": f"Plan offsite {n}"}, thread_config("orch-r"), context=CONTEXT)
            sizes.append(len(checkpoint_bytes(pool, "orch-r")))
    with scoped(pool, SCOPE) as conn:
        row = conn.execute(
            "SELECT count(*) FILTER (WHERE metadata->>'source' = 'input' AND checkpoint_ns = '') "
            "AS turns, "
            "count(*) FILTER (WHERE checkpoint_ns <> '') AS nested "
            "FROM checkpoints WHERE thread_id = 'orch-r'"
        ).fetchone()
    assert row is not None
    assert 2 <= row["turns"] <= 3, "the newest `retain` turns, as for the agent"
    assert row["nested"] == 0, "workers write no checkpoints of their own"
    with acting_as(SCOPE):
        state = graph.get_state(thread_config("orch-r")).values
    assert {r["round"] for r in state["results"]} == {6}, "older rounds' results are dropped"
    assert max(sizes[2:]) <= 1.5 * min(sizes[2:]), f"stored bytes grow with rounds: {sizes}"


def test_learned_facts_take_the_extraction_path(
    pool: ConnectionPool[Any], worker_pool: ConnectionPool[Any], memory: Any
) -> None:
    graph = make_graph(checkpointer=ScopedPostgresSaver(pool), memory=memory)
    with use_pool(pool):
        out = graph.invoke(
            {"task": "Plan the offsite", "blackboard": {"budget": "1200 EUR"}},
            config=thread_config("orch-x"),
            context=CONTEXT,
        )
        fast = WorkerSettings(max_attempts=2, backoff_s=0.0, lease_s=30, poll_s=0.05, timeout_s=5)
        [outcome] = Worker(worker_pool, memory=memory, settings=fast).drain()
    learned = [f for f in out["facts"] if f["learned"]]
    assert learned
    assert all(f["sources"] == ["board:budget"] for f in learned)
    assert (outcome.status, outcome.stored) == ("done", len(learned))
    with scoped(pool, SCOPE) as conn:
        rows = conn.execute(
            "SELECT text, source_message_ids AS sources FROM fact_candidates ORDER BY id"
        ).fetchall()
    assert [r["text"] for r in rows] == [f"Team offsite: {f['text'].rstrip('.')}" for f in learned]
    assert all(r["sources"][0].startswith("r1-fact") for r in rows)
    remembered = [f.text for f in memory.facts(SCOPE)]
    assert any(t.startswith("Team offsite:") for t in remembered)
