"""The prompt is laid out for providers' prompt caches: consecutive turns share their prefix,
and an Anthropic model gets explicit breakpoints."""

from __future__ import annotations

from langchain_anthropic import ChatAnthropic
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langchain_openai import ChatOpenAI

from recollect.history.records import PinnedValue
from recollect.history.window import fit_window, message_tokens
from recollect.models.factory import is_anthropic
from recollect.prebuilt.call_model import prompt_for_model
from recollect.prebuilt.memory_block import MEMORY_IS_DATA, RECALLED_KEY
from recollect.prebuilt.prompt import build_prompt
from recollect.state.context import Context
from recollect.state.memory_state import RecalledItem
from state.agent import AgentState

CTX = Context(context_tokens=6000, system_prompt="Be helpful.")


def _fact(n: int) -> RecalledItem:
    return RecalledItem(
        id=f"fact-{n:08d}", kind="fact", text=f"fact {n}", learned_at="2026-11-02", score=0.5
    )


def _state(turns: int) -> AgentState:
    messages: list[AnyMessage] = []
    for i in range(turns):
        messages += [
            HumanMessage(f"question {i}", id=f"h{i}"),
            AIMessage(f"answer {i}", id=f"a{i}"),
        ]
    messages.append(HumanMessage(f"question {turns}", id=f"h{turns}"))
    pinned = {"order:1": PinnedValue(kind="order", value="8842-B", source_message_id="h0")}
    return {"messages": messages, "recalled": [_fact(turns)], "pinned": pinned}


def test_a_new_turn_only_appends_and_recalls_only_what_the_history_does_not_say() -> None:
    first = build_prompt(_state(3), CTX)
    state = _state(4)
    state["recalled"] = [_fact(3), _fact(4)]
    after = build_prompt({**state, "recalled_shown": first.recalled_shown}, CTX).messages
    assert after[: len(first.messages)] == first.messages  # last turn's memories stay
    assert after[-2].text == "question 4"
    assert after[-1].additional_kwargs[RECALLED_KEY]
    assert "fact 4" in after[-1].text
    assert "fact 3" not in after[-1].text  # shown after question 3 already
    assert MEMORY_IS_DATA in after[0].text
    assert "fact" not in after[0].text


def test_a_pin_waits_in_the_history_until_its_message_leaves_it() -> None:
    state = _state(2)
    said: AgentState = {**state, "messages": [HumanMessage("my order is 8842-B", id="h0")]}
    assert "8842-B" not in build_prompt(said, CTX).messages[0].text
    assert "## Pinned values\n- order: 8842-B" in build_prompt(state, CTX).messages[0].text


def test_anthropic_gets_breakpoints_on_the_system_and_the_last_two_user_parts() -> None:
    claude = ChatAnthropic(model_name="claude-sonnet-4-5", api_key="unused")  # type: ignore[call-arg]
    assert is_anthropic(claude)
    assert is_anthropic("anthropic:claude-sonnet-4-5")
    assert not is_anthropic(ChatOpenAI(model="gpt-4.1-mini", api_key="unused"))
    assert not is_anthropic("openai:gpt-4.1-mini")
    messages = prompt_for_model(_state(3), CTX, cache_marks=True).messages
    payload = claude._get_request_payload(messages)
    assert payload["system"][-1]["cache_control"] == {"type": "ephemeral"}
    marked = [
        block["text"]
        for message in payload["messages"]
        for block in message["content"]
        if isinstance(block, dict) and "cache_control" in block
    ]
    assert marked[0] == "question 2"  # no memories were shown after it
    assert "fact 3" in marked[1]  # this turn's memories end its user part
    state: AgentState = {**_state(3), "recalled_shown": {"h2": '- (2026-11-02) "fact 2" [m:2]'}}
    messages = prompt_for_model(state, CTX, cache_marks=True).messages
    ends = [i for i, m in enumerate(messages) if m.content != m.text]
    assert [messages[i].additional_kwargs.get(RECALLED_KEY) for i in ends] == [None, True, True]
    plain = prompt_for_model(_state(3), CTX).messages
    assert all(isinstance(m.content, str) for m in plain)


def test_a_cut_goes_down_to_the_low_water_mark_and_cuts_no_message_under_the_budget() -> None:
    turns = _state(30)["messages"]
    window = fit_window(turns, 200, 100)
    assert message_tokens(window.kept) <= 100
    assert window.kept[-1].text == "question 30"
    big = [*turns, HumanMessage("word " * 500, id="big")]  # the newest turn alone: ~500 tokens
    window = fit_window(big, 1000, 100)
    assert [m.id for m in window.kept] == ["big"]
    assert not window.truncated_ids  # over the low-water mark, under the budget: kept whole
