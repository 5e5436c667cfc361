"""Trim in the checkpointed graph: the stored list shrinks, and nothing exact is lost."""

from __future__ import annotations

import itertools
import json

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.postgres import PostgresSaver

from graphs.agent import make_graph
from recollect import thread_config, user_turn
from recollect.history.tokens import text_tokens
from recollect.state.context import Context
from tests.support.scripted_openai import ScriptedOpenAI


def test_the_trim_step_itself_shrinks_the_checkpointed_message_list(
    checkpointer: PostgresSaver, scripted_llm: ScriptedOpenAI
) -> None:
    agent = make_graph(checkpointer=checkpointer)
    config = thread_config("t-shrink")
    ctx = Context(max_history_tokens=150)
    for turn in range(4):
        agent.invoke(user_turn(f"turn {turn} " + "words " * 40), config=config, context=ctx)
    history = list(agent.get_state_history(config))  # newest first
    after_trim = [
        (snapshot, parent)
        for snapshot, parent in itertools.pairwise(history)
        if (snapshot.metadata or {}).get("source") == "loop" and "trim" in parent.next
    ]
    assert len(after_trim) >= 3
    shrunk = [
        len(parent.values["messages"]) - len(snapshot.values["messages"])
        for snapshot, parent in after_trim
    ]
    assert max(shrunk) >= 2, f"trim removed messages from the checkpoint: {shrunk}"
    for snapshot, parent in after_trim:
        kept = {m.id for m in snapshot.values["messages"]}
        moved = {m.id for m in snapshot.values.get("unfolded", [])}
        assert {m.id for m in parent.values["messages"]} <= kept | moved, "nothing vanished"


def test_values_in_a_message_trimmed_in_the_same_turn_are_pinned_first(
    checkpointer: PostgresSaver, scripted_llm: ScriptedOpenAI
) -> None:
    agent = make_graph(checkpointer=checkpointer)
    config = thread_config("t-pin-first")
    ctx = Context(max_history_tokens=120)
    burst = {
        "messages": [
            HumanMessage(content="order 5521-K, email lee@example.org, never call before 9am"),
            HumanMessage(content="and now a long one " + "words " * 200),
        ]
    }
    agent.invoke(burst, config=config, context=ctx)
    state = agent.get_state(config).values
    texts = [m.text for m in state["messages"]]
    assert not any("5521-K" in text for text in texts), "the first message left the window"
    pinned = {p["value"] for p in state["pinned"].values()}
    assert {"5521-K", "lee@example.org", "never call before 9am"} <= pinned
    reply_prompt = next(r for r in scripted_llm.chat_requests if "tools" in r)
    assert "5521-K" in json.dumps(reply_prompt["messages"])


def test_an_oversized_newest_message_is_cut_in_the_checkpoint_keeping_its_id(
    checkpointer: PostgresSaver, scripted_llm: ScriptedOpenAI
) -> None:
    agent = make_graph(checkpointer=checkpointer)
    config = thread_config("t-cut")
    # Within the message size limit, far over the 800-token history budget.
    doc = json.dumps({"rows": [{"n": i, "note": "x" * 30} for i in range(560)]})
    message = HumanMessage(content=doc, id="big-1")
    agent.invoke({"messages": [message]}, config=config, context=Context(max_history_tokens=800))
    stored = agent.get_state(config).values["messages"][0]
    assert stored.id == "big-1"
    assert text_tokens(stored.text) < 800
    rows = json.loads(stored.text)["rows"]
    assert rows[0]["n"] == 0
    assert rows[-1]["n"] == 559
