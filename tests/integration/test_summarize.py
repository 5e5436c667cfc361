"""The incremental summary through the real OpenAI client, checkpointed in Postgres."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.postgres import PostgresSaver

from graphs.agent import make_graph
from recollect import thread_config, user_turn
from recollect.history.summary import FOLD_BATCH_TOKENS, FOLD_INSTRUCTIONS, UNFOLDED_BUDGETS
from recollect.history.tokens import text_tokens
from recollect.history.window import message_tokens
from recollect.models import factory as models
from recollect.state.context import Context
from tests.support.scripted_openai import Reply, ScriptedError, ScriptedOpenAI, echo_responder

_MARK = re.compile(r"\bT(\d{2})\b")


def is_fold(request: dict[str, Any]) -> bool:
    return str(request["messages"][0]["content"]).startswith(FOLD_INSTRUCTIONS[:40])


class Responder:
    """Folds answer `SUMMARY n`; a switch makes them fail or hang, replies echo."""

    def __init__(self) -> None:
        self.folds = 0
        self.failure: Reply | None = None

    def __call__(self, request: dict[str, Any]) -> Reply:
        if not is_fold(request):
            return echo_responder(request)
        if self.failure is not None:
            return self.failure
        self.folds += 1
        return Reply(text=f"SUMMARY {self.folds}")


@pytest.fixture
def responder(scripted_llm: ScriptedOpenAI) -> Iterator[Responder]:
    models._cached_model.cache_clear()
    script = Responder()
    scripted_llm.set_default(script)
    yield script
    models._cached_model.cache_clear()


def fold_requests(llm: ScriptedOpenAI) -> list[str]:
    return [r["messages"][1]["content"] for r in llm.chat_requests if is_fold(r)]


def marks(text: str) -> set[int]:
    return {int(m) for m in _MARK.findall(text)}


def test_each_fold_sends_only_what_left_the_window_plus_the_previous_summary(
    checkpointer: PostgresSaver, scripted_llm: ScriptedOpenAI, responder: Responder
) -> None:
    agent = make_graph(checkpointer=checkpointer)
    config = thread_config("t-fold")
    ctx = Context(max_history_tokens=200)
    for turn in range(14):
        agent.invoke(user_turn(f"T{turn:02d} " + "detail " * 20), config=config, context=ctx)
    folds = fold_requests(scripted_llm)
    assert len(folds) >= 3, "folds happen as messages leave the window"
    assert len(folds) < 14, "folding is triggered by a threshold, not every turn"
    state = agent.get_state(config).values
    window = set().union(*(marks(m.text) for m in state["messages"]))
    pending = set().union(set(), *(marks(m.text) for m in state.get("unfolded", [])))
    seen: list[int] = []
    for number, body in enumerate(folds, start=1):
        previous = "(none yet)" if number == 1 else f"SUMMARY {number - 1}"
        assert body.startswith(f"Current summary:\n{previous}\n\nNew messages to fold in:\n")
        folded = marks(body)
        assert folded, body
        assert not folded & window, "a message still in the window was folded"
        assert not folded & set(seen), "a message was folded twice"
        seen += folded
    assert set(seen) | window | pending == set(range(14)), "every turn is somewhere"
    assert state["summary"]["text"] == f"SUMMARY {len(folds)}"
    assert state["summary"]["folded_messages"] > 0


def test_the_summary_cap_is_sent_as_max_tokens_and_enforced_by_a_hard_cut(
    checkpointer: PostgresSaver, scripted_llm: ScriptedOpenAI, responder: Responder
) -> None:
    responder.failure = Reply(raw="word " * 2000)  # raw content ignores max_tokens
    agent = make_graph(checkpointer=checkpointer)
    config = thread_config("t-cap")
    ctx = Context(max_history_tokens=150, summary_max_tokens=60)
    for turn in range(6):
        agent.invoke(user_turn(f"T{turn:02d} " + "detail " * 20), config=config, context=ctx)
    fold = next(r for r in scripted_llm.chat_requests if is_fold(r))
    assert fold.get("max_completion_tokens", fold.get("max_tokens")) == 60
    summary = agent.get_state(config).values["summary"]["text"]
    assert summary.startswith("…word word"), "the oldest part is cut, the newest kept"
    assert text_tokens(summary) <= 60


@pytest.mark.parametrize("failure", ["http-500", "timeout", "empty"])
def test_a_failed_fold_loses_nothing_and_folds_later(
    checkpointer: PostgresSaver,
    scripted_llm: ScriptedOpenAI,
    responder: Responder,
    monkeypatch: pytest.MonkeyPatch,
    failure: str,
) -> None:
    if failure == "http-500":
        responder.failure = Reply(error=ScriptedError(500, "summariser down"))
    elif failure == "empty":
        responder.failure = Reply(text="")
    else:
        monkeypatch.setenv("RECOLLECT_MODEL_TIMEOUT", "0.3")
        responder.failure = Reply(text="too late", delay=1.5)
    agent = make_graph(checkpointer=checkpointer)
    config = thread_config(f"t-{failure}")
    ctx = Context(max_history_tokens=150)
    for turn in range(4):  # fewer failures than MAX_FOLD_FAILURES
        agent.invoke(user_turn(f"T{turn:02d} " + "detail " * 20), config=config, context=ctx)
    state = agent.get_state(config).values
    assert len(fold_requests(scripted_llm)) >= 1, "a fold was attempted"
    assert not state.get("summary")
    assert state["fold_status"]["last"] == "failed"
    waiting = set().union(*(marks(m.text) for m in state["unfolded"]))
    window = set().union(*(marks(m.text) for m in state["messages"]))
    assert waiting | window == set(range(4)), "every message is still in state"
    replies = [r for r in scripted_llm.chat_requests if not is_fold(r)]
    shown = marks(json.dumps(replies[-1]["messages"]))
    assert waiting <= shown, "unfolded messages are still shown to the model"

    responder.failure = None
    agent.invoke(user_turn("T04 " + "detail " * 20), config=config, context=ctx)
    state = agent.get_state(config).values
    assert state["summary"]["text"] == "SUMMARY 1"
    assert state["fold_status"] == {"failures": 0, "extractive_folds": 0, "last": "model"}
    assert waiting <= marks(fold_requests(scripted_llm)[-1]), "the late fold took them all"


def test_a_fold_that_keeps_failing_falls_back_to_extractive_and_state_stays_bounded(
    checkpointer: PostgresSaver, scripted_llm: ScriptedOpenAI, responder: Responder
) -> None:
    responder.failure = Reply(error=ScriptedError(500, "summariser down"))
    agent = make_graph(checkpointer=checkpointer)
    config = thread_config("t-fold-down")
    ctx = Context(max_history_tokens=150)
    unfolded_tokens = []
    for turn in range(40):
        agent.invoke(user_turn(f"T{turn:02d} " + "detail " * 20), config=config, context=ctx)
        state = agent.get_state(config).values
        unfolded_tokens.append(message_tokens(state.get("unfolded", [])))
    assert max(unfolded_tokens) <= (UNFOLDED_BUDGETS + 1) * 150, unfolded_tokens
    status = state["fold_status"]
    assert status["extractive_folds"] >= 5, status
    assert text_tokens(state["summary"]["text"]) <= ctx.summary_max_tokens
    assert 38 in marks(state["summary"]["text"]) | marks(
        json.dumps([m.text for m in state["messages"]])
    )
    largest = max(text_tokens(body) for body in fold_requests(scripted_llm))
    assert largest <= FOLD_BATCH_TOKENS + ctx.summary_max_tokens + 50, largest


def test_tool_rounds_with_parallel_calls_are_trimmed_cut_pinned_and_folded_whole(
    checkpointer: PostgresSaver, scripted_llm: ScriptedOpenAI, responder: Responder
) -> None:
    agent = make_graph(checkpointer=checkpointer)
    config = thread_config("t-tools")
    ctx = Context(max_history_tokens=1000, context_tokens=4000)
    entries = [{"i": i, "msg": "GET /api/items 200 " + "x" * 20} for i in range(900)]
    entries[450] = {"i": 450, "msg": "refund for order 7731-Q issued"}
    log = json.dumps({"service": "billing", "entries": entries})
    assert text_tokens(log) > 9000
    calls = [
        {"name": "fetch_logs", "args": {}, "id": "call-a", "type": "tool_call"},
        {"name": "lookup_user", "args": {}, "id": "call-b", "type": "tool_call"},
    ]
    agent.invoke(
        {
            "messages": [
                HumanMessage(content="T00 check the billing logs"),
                AIMessage(content="", tool_calls=calls),
                ToolMessage(content=log, tool_call_id="call-a", name="fetch_logs"),
                ToolMessage(content="user ana@example.com", tool_call_id="call-b"),
            ]
        },
        config=config,
        context=ctx,
    )
    state = agent.get_state(config).values
    stored = next(m for m in state["messages"] if isinstance(m, ToolMessage) and m.name)
    assert text_tokens(stored.text) < 1000, "the checkpoint holds a cut copy"
    data = json.loads(stored.text)
    assert data["entries"][0]["i"] == 0
    assert data["entries"][-1]["i"] == 899
    pinned = {p["value"] for p in state["pinned"].values()}
    assert {"7731-Q", "ana@example.com"} <= pinned, "values in the cut middle are pinned"
    sent = scripted_llm.last_messages()
    assert "7731-Q" in sent[0]["content"]
    tool_sent = [m for m in sent if m["role"] == "tool"]
    assert len(tool_sent) == 2
    json.loads(tool_sent[0]["content"])

    for turn in range(1, 6):
        agent.invoke(user_turn(f"T{turn:02d} " + "more " * 60), config=config, context=ctx)
    fold = next(body for body in fold_requests(scripted_llm) if "T00" in body)
    assert "User: T00 check the billing logs" in fold
    assert "Assistant [called fetch_logs, lookup_user]" in fold
    assert "Tool result (fetch_logs)" in fold
    assert len(fold) < 4000, "tool output is cut before the fold"
    for request in scripted_llm.chat_requests:
        ids = [c["id"] for m in request["messages"] for c in m.get("tool_calls") or []]
        results = [m["tool_call_id"] for m in request["messages"] if m["role"] == "tool"]
        assert sorted(ids) == sorted(results), "no orphaned tool call or result was sent"
