"""Prompt assembly within the context budget, category by category."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from recollect.history.records import PinnedValue
from recollect.history.window import message_tokens
from recollect.prebuilt.prompt import SHARES, build_prompt
from recollect.state.context import Context
from recollect.state.memory_state import RecalledItem, RunningSummary
from state.agent import AgentState


def _ctx(tokens: int = 6000) -> Context:
    return Context(context_tokens=tokens, system_prompt="Be helpful.")


def _tool_turn(rows: int) -> list:
    call = {"name": "fetch_logs", "args": {}, "id": "c1", "type": "tool_call"}
    log = json.dumps({"service": "billing", "entries": [f"line {i} ok" for i in range(rows)]})
    return [
        HumanMessage(content="check the logs", id="h1"),
        AIMessage(content="", tool_calls=[call], id="a1"),
        ToolMessage(content=log, tool_call_id="c1", name="fetch_logs", id="t1"),
    ]


def test_tokens_are_reported_per_category_and_add_up() -> None:
    state: AgentState = {
        "messages": [HumanMessage(content="hi", id="h")],
        "pinned": {"order:1-a": PinnedValue(kind="order", value="1-A", source_message_id="h")},
        "summary": RunningSummary(
            text="User is migrating.", last_folded_id=None, folded_messages=2
        ),
    }
    prompt = build_prompt(state, _ctx())
    for key in ("system", "pinned", "summary", "history", "tool_results", "total"):
        assert key in prompt.tokens
    assert prompt.tokens["total"] == message_tokens(prompt.messages)
    system = prompt.messages[0].text
    assert "## Pinned values\n- order: 1-A" in system
    assert "## Conversation summary\nUser is migrating." in system


def test_a_huge_tool_result_is_cut_to_its_share_and_stays_valid_json() -> None:
    state: AgentState = {"messages": _tool_turn(3000)}
    prompt = build_prompt(state, _ctx(6000))
    tool = prompt.messages[-1]
    assert isinstance(tool, ToolMessage)
    data = json.loads(tool.text)
    assert data["entries"][0] == "line 0 ok"
    assert data["entries"][-1] == "line 2999 ok"
    assert any("items cut" in e for e in data["entries"])
    assert prompt.tokens["tool_results"] <= 6000 * SHARES.tool_results
    assert prompt.tokens["cut_tool_results"] == 1
    assert state["messages"][-1].text != tool.text  # state itself is untouched


def test_recalled_items_drop_the_lowest_ranked_whole() -> None:
    items = [
        RecalledItem(
            id=str(i),
            kind="fact",
            text=f"fact {i} " + "x" * 300,
            learned_at=f"2026-01-0{i}T00:00:00Z",
            score=score,
        )
        for i, score in enumerate([0.9, 0.2, 0.5, 0.7], start=1)
    ]
    state: AgentState = {"messages": [HumanMessage(content="hi", id="h")], "recalled": items}
    prompt = build_prompt(state, _ctx(1000))  # 150 tokens for recalled: one item fits
    system, newest, tail = (m.text for m in prompt.messages)
    assert newest == "hi"  # the recalled memories come last, right after the newest message
    assert "fact 1 " in tail
    assert "fact 1 " not in system
    assert "fact 2 " not in tail
    assert "fact 3 " not in tail
    assert prompt.tokens["dropped_recalled"] == 3
    assert "…" not in tail.split("## Recalled memories")[1]  # never cut mid-item


def test_history_over_budget_drops_oldest_whole_turns_and_keeps_pairs() -> None:
    messages: list = [SystemMessage(content="Thread rule.", id="s")]
    for i in range(40):
        messages += [
            HumanMessage(content=f"q{i} " + "w" * 400, id=f"h{i}"),
            AIMessage(content=f"a{i} " + "w" * 400, id=f"a{i}"),
        ]
    prompt = build_prompt({"messages": messages}, _ctx(3000))
    assert prompt.tokens["total"] <= 3000
    assert prompt.messages[1].type == "human"
    assert prompt.messages[-1].text.startswith("a39")
    assert "Thread rule." in prompt.messages[0].text
    assert prompt.tokens["dropped_history"] > 0


def test_unfolded_messages_are_shown_before_the_window() -> None:
    state: AgentState = {
        "unfolded": [
            HumanMessage(content="old question", id="o1"),
            AIMessage(content="old", id="o2"),
        ],
        "messages": [HumanMessage(content="new question", id="n1")],
    }
    prompt = build_prompt(state, _ctx())
    assert [m.text for m in prompt.messages[1:]] == ["old question", "old", "new question"]


def test_pinned_values_over_their_share_keep_constraints_and_the_newest() -> None:
    pinned = {
        f"order:{i}": PinnedValue(kind="order", value=f"{i:05d}-X", source_message_id=None)
        for i in range(200)
    }
    pinned["constraint:never x"] = PinnedValue(
        kind="constraint", value="never X", source_message_id=None
    )
    prompt = build_prompt({"messages": [], "pinned": pinned}, _ctx(2000))
    section = prompt.messages[0].text.split("## Pinned values\n")[1]
    assert section.startswith("- constraint: never X")
    assert "00199-X" in section
    assert "00000-X" not in section
    assert "older pinned values not shown" in section
    assert prompt.tokens["hidden_pinned"] > 0


@pytest.mark.parametrize("field", ["max_history_tokens", "summary_max_tokens", "context_tokens"])
@pytest.mark.parametrize("value", [0, -5, "3000"])
def test_impossible_budgets_are_refused_with_a_clear_error(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=f"Context.{field} must be a positive whole number"):
        Context(**{field: value})  # type: ignore[arg-type]


def test_a_newest_turn_larger_than_the_whole_budget_is_cut_not_sent_whole() -> None:
    state: AgentState = {"messages": [HumanMessage(content="q " * 20_000, id="h")]}
    prompt = build_prompt(state, _ctx(2000))
    assert prompt.tokens["total"] <= 2000 + 60
    assert "characters" in prompt.messages[-1].text


def test_a_malformed_summary_cap_in_the_environment_is_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RECOLLECT_SUMMARY_MAX_TOKENS", "lots")
    with pytest.raises(ValueError, match="RECOLLECT_SUMMARY_MAX_TOKENS must be a whole number"):
        Context()
