"""Property tests of the verbatim window over random system/human/AI/tool sequences."""

from __future__ import annotations

import itertools
import json

from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    trim_messages,
)
from langchain_core.messages.utils import count_tokens_approximately

from recollect.history.window import (
    MIN_MESSAGE_TOKENS,
    fit_window,
    kept_messages,
    message_tokens,
    repair_tool_pairs,
)

_ids = itertools.count()
_text = st.integers(min_value=0, max_value=2400).map(lambda n: "w" * n)


def _id(prefix: str) -> str:
    return f"{prefix}-{next(_ids)}"


@st.composite
def turn(draw: st.DrawFn) -> list[BaseMessage]:
    """A human message, optionally a tool round (parallel calls), then usually an answer."""
    messages: list[BaseMessage] = [HumanMessage(content=draw(_text), id=_id("h"))]
    for _round in range(draw(st.integers(0, 2))):
        calls = [
            {"name": "lookup", "args": {"q": "x"}, "id": _id("call"), "type": "tool_call"}
            for _ in range(draw(st.integers(1, 3)))
        ]
        messages.append(AIMessage(content="", tool_calls=calls, id=_id("ai")))
        for call in calls:
            content = draw(_text | st.just(json.dumps({"rows": ["r" * 40] * 300})))
            messages.append(ToolMessage(content=content, tool_call_id=call["id"], id=_id("t")))
    if draw(st.booleans()):
        messages.append(AIMessage(content=draw(_text), id=_id("ai")))
    return messages


@st.composite
def conversation(draw: st.DrawFn) -> list[BaseMessage]:
    head: list[BaseMessage] = []
    if draw(st.booleans()):
        head.append(SystemMessage(content=draw(_text), id=_id("s")))
    turns = draw(st.lists(turn(), min_size=0, max_size=12))
    return head + [m for t in turns for m in t]


@st.composite
def shuffled(draw: st.DrawFn) -> list[BaseMessage]:
    """Arbitrary orders, including orphans the graph should never produce."""
    messages = draw(conversation())
    body = messages[1:] if messages and messages[0].type == "system" else messages
    order = draw(st.permutations(list(range(len(body)))))
    return messages[: len(messages) - len(body)] + [body[i] for i in order]


budgets = st.integers(min_value=40, max_value=4000)


def assert_paired(kept: list[BaseMessage]) -> None:
    calls = {c["id"] for m in kept if isinstance(m, AIMessage) for c in m.tool_calls}
    results = {m.tool_call_id for m in kept if isinstance(m, ToolMessage)}
    assert results <= calls, "a tool result was kept without its call"
    assert calls <= results, "a tool call was kept without all its results"


def body_of(kept: list[BaseMessage]) -> list[BaseMessage]:
    return kept[1:] if kept and kept[0].type == "system" else kept


@settings(max_examples=300, deadline=None)
@given(conversation(), budgets)
def test_window_invariants_on_conversations(messages: list[BaseMessage], budget: int) -> None:
    kept = kept_messages(messages, budget)
    if messages and messages[0].type == "system":
        assert kept[0] is messages[0]
    assert_paired(kept)
    body = body_of(kept)
    if any(isinstance(m, HumanMessage) for m in messages):
        assert body, "a conversation with a human turn keeps at least the newest turn"
        assert isinstance(body[0], HumanMessage)
        assert body == messages[len(messages) - len(body) :], "the window is the newest suffix"
        last_human = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))
        within = message_tokens(kept) <= budget
        assert within or len(body) == len(messages) - last_human, (
            "over budget only when the newest turn alone exceeds it"
        )


@settings(max_examples=300, deadline=None)
@given(shuffled(), budgets)
def test_window_invariants_on_arbitrary_orders(messages: list[BaseMessage], budget: int) -> None:
    kept = kept_messages(messages, budget)
    if messages and messages[0].type == "system":
        assert kept[0] is messages[0]
    assert_paired(kept)
    body = body_of(kept)
    assert not body or isinstance(body[0], HumanMessage)


@settings(max_examples=300, deadline=None)
@given(conversation(), budgets)
def test_fit_window_loses_nothing_and_holds_the_budget(
    messages: list[BaseMessage], budget: int
) -> None:
    window = fit_window(messages, budget)
    kept_ids = [m.id for m in window.kept]
    dropped_ids = [m.id for m in window.dropped]
    assert sorted(kept_ids + dropped_ids) == sorted(m.id for m in messages), "nothing vanishes"
    body_in = messages[1:] if messages and messages[0].type == "system" else messages
    assert dropped_ids == [m.id for m in body_in[: len(dropped_ids)]], "the oldest leave"
    assert_paired(window.kept)
    system = [m for m in window.kept[:1] if m.type == "system"]
    body = window.kept[len(system) :]
    fixed = [message_tokens([m.model_copy(update={"content": ""})]) for m in body]
    floor = message_tokens(system) + sum(f + MIN_MESSAGE_TOKENS for f in fixed)
    assert message_tokens(window.kept) <= max(budget, floor), "the budget holds after cutting"
    for message in window.dropped:
        empty = message_tokens([message.model_copy(update={"content": ""})])
        assert message_tokens([message]) <= max(budget, empty + MIN_MESSAGE_TOKENS)
    for message in window.kept + window.dropped:
        if isinstance(message, ToolMessage) and message.text.startswith("{"):
            json.loads(message.text)  # cut results are still valid JSON


def test_trim_messages_alone_can_orphan_tool_results() -> None:
    """The upstream behaviour `repair_tool_pairs` exists for (langchain-core #33245)."""
    call = {"name": "lookup", "args": {}, "id": "c1", "type": "tool_call"}
    messages: list[BaseMessage] = [
        HumanMessage(content="q", id="h1"),
        AIMessage(content="", tool_calls=[call], id="a1"),
        ToolMessage(content="x" * 400, tool_call_id="c1", id="t1"),
        ToolMessage(content="late duplicate", tool_call_id="c1", id="t2"),
        HumanMessage(content="next", id="h2"),
    ]
    upstream = trim_messages(
        messages[2:],
        max_tokens=60,
        token_counter=count_tokens_approximately,
        strategy="last",
    )
    assert any(isinstance(m, ToolMessage) for m in upstream)
    assert_paired(repair_tool_pairs(upstream))
    assert [m.id for m in repair_tool_pairs(upstream)] == ["h2"]
