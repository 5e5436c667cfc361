"""Random histories through the history nodes: block-list content, oversized messages,
dangling tool calls and a summariser that is down. Whatever happens, every prompt is within
budget and valid for the OpenAI API, and the thread's state stays bounded.

The nodes run as the graph runs them (trim, the prompt, summarize), with LangGraph's own
reducers applying their updates; the fold really calls the OpenAI client, at a port where
nothing listens, so every model fold fails.
"""

from __future__ import annotations

import itertools
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_openai.chat_models.base import _convert_message_to_dict
from langgraph.graph.message import add_messages
from langgraph.runtime import Runtime

from recollect.history.pinning import MAX_PINNED_INSTRUCTIONS, MAX_PINNED_VALUES
from recollect.history.summary import UNFOLDED_BUDGETS
from recollect.history.tokens import message_tokens, text_tokens
from recollect.models import factory as models
from recollect.prebuilt.prompt import build_prompt
from recollect.prebuilt.summarize import summarize
from recollect.prebuilt.trim import trim
from recollect.state.context import Context
from recollect.state.memory_state import merge_pinned
from state.agent import AgentState
from tests.support.scripted_openai import message_order_errors

_ids = itertools.count()
WORDS = ["order 8842-B", "refund", "249,00 €", "never call me", "注文番号", "订单", "lorem"]


def _id(prefix: str) -> str:
    return f"{prefix}-{next(_ids)}"


@st.composite
def text(draw: st.DrawFn) -> str:
    size = draw(st.sampled_from([1, 5, 40, 400, 1500]))
    return " ".join(draw(st.sampled_from(WORDS)) for _ in range(size))


@st.composite
def content(draw: st.DrawFn) -> str | list[Any]:
    if draw(st.booleans()):
        return draw(text())
    blocks: list[Any] = [
        {"type": "text", "text": draw(text())} for _ in range(draw(st.integers(1, 3)))
    ]
    images = draw(st.integers(0, 6))
    blocks += [{"type": "image_url", "image_url": {"url": "data:,x"}}] * images
    return blocks


@st.composite
def reply(draw: st.DrawFn) -> list[BaseMessage]:
    """The model's side of a turn: tool rounds (some results missing), then maybe an answer."""
    out: list[BaseMessage] = []
    for _round in range(draw(st.integers(0, 2))):
        calls = [
            {"name": "lookup", "args": {"q": "x"}, "id": _id("call"), "type": "tool_call"}
            for _ in range(draw(st.integers(1, 3)))
        ]
        out.append(AIMessage(content="", tool_calls=calls, id=_id("ai")))
        for call in calls:
            if draw(st.integers(0, 4)) == 0:
                continue  # a tool that raised or a run that stopped: no result
            body = draw(text()) if draw(st.booleans()) else [{"type": "text", "text": draw(text())}]
            out.append(ToolMessage(content=body, tool_call_id=call["id"], id=_id("t")))
        if len(out[-1:]) and isinstance(out[-1], AIMessage):
            return out  # the run stopped before its tools
    if draw(st.booleans()):
        out.append(AIMessage(content=draw(text()), id=_id("ai")))
    return out


turns = st.lists(st.tuples(content(), reply()), min_size=1, max_size=8)


def _apply(state: AgentState, update: dict[str, Any]) -> AgentState:
    """What LangGraph does with a node's update, through the real reducers."""
    merged: dict[str, Any] = dict(state)
    for key, value in update.items():
        if key == "messages":
            merged[key] = add_messages(state.get("messages", []), value)
        elif key == "pinned":
            merged[key] = merge_pinned(state.get("pinned"), value)
        elif key == "unpinned":
            merged[key] = state.get("unpinned", 0) + value
        else:
            merged[key] = value
    return merged  # type: ignore[return-value]


@pytest.fixture(scope="module")
def summariser_down() -> Iterator[None]:
    """The OpenAI client pointed at a local port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    patch = pytest.MonkeyPatch()
    patch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    patch.setenv("OPENAI_API_KEY", "test-key")
    patch.setenv("RECOLLECT_MODEL_MAX_RETRIES", "0")
    models._cached_model.cache_clear()
    yield
    patch.undo()
    models._cached_model.cache_clear()


@settings(
    max_examples=20,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(turns)
def test_prompts_stay_valid_and_within_budget_and_state_stays_bounded(
    summariser_down: None, history: list[tuple[str | list[Any], list[BaseMessage]]]
) -> None:
    ctx = Context(max_history_tokens=1500, context_tokens=4000, summary_max_tokens=200)
    runtime = Runtime(context=ctx)
    state: AgentState = {"messages": []}
    for said, answered in history:
        state = _apply(state, {"messages": [HumanMessage(content=said, id=_id("h"))]})
        state = _apply(state, trim(state, runtime))
        assert message_tokens(state["messages"]) <= ctx.max_history_tokens + 200
        prompt = build_prompt(state, ctx)
        assert prompt.tokens["total"] <= ctx.context_tokens
        assert message_tokens(prompt.messages) <= ctx.context_tokens
        wire = [_convert_message_to_dict(m) for m in prompt.messages]
        assert message_order_errors(wire) == [], wire
        assert [m["role"] for m in wire[:2]] == ["system", "user"]
        state = _apply(state, {"messages": answered})
        state = _apply(state, summarize(state, runtime))
        unfolded = message_tokens(state.get("unfolded", []))
        assert unfolded <= (UNFOLDED_BUDGETS + 2) * ctx.max_history_tokens
        pins = list((state.get("pinned") or {}).values())
        instructions = [p for p in pins if p["kind"] in ("constraint", "preference")]
        assert len(instructions) <= MAX_PINNED_INSTRUCTIONS
        assert len(pins) - len(instructions) <= MAX_PINNED_VALUES
        summary = state.get("summary")
        if summary:
            assert text_tokens(summary["text"]) <= ctx.summary_max_tokens
