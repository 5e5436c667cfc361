"""The graph's entry refuses oversized messages before any node runs, and saves nothing."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.postgres import PostgresSaver

from graphs.agent import make_graph
from recollect import thread_config, user_turn
from recollect.history.limits import (
    MAX_MESSAGE_BLOCKS,
    MessageTooLargeError,
    UnstorableTextError,
)
from recollect.state.context import Context
from tests.support.scripted_openai import ScriptedOpenAI


def test_an_oversized_message_fails_the_run_before_any_node_and_is_not_kept(
    checkpointer: PostgresSaver, scripted_llm: ScriptedOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECOLLECT_MAX_MESSAGE_CHARS", "5000")
    agent = make_graph(checkpointer=checkpointer)
    config = thread_config("t-limit")
    agent.invoke(user_turn("hello"), config=config, context=Context())
    calls = len(scripted_llm.chat_requests)
    with pytest.raises(MessageTooLargeError, match=r"^message too large: 5,001 characters"):
        agent.invoke(user_turn("x" * 5001), config=config, context=Context())
    assert len(scripted_llm.chat_requests) == calls, "no model call was made"
    blocks = [{"type": "image_url", "image_url": {"url": "data:,"}}] * (MAX_MESSAGE_BLOCKS + 1)
    with pytest.raises(MessageTooLargeError, match="attachments"):
        agent.invoke({"messages": [HumanMessage(content=blocks)]}, config, context=Context())
    agent.invoke(user_turn("still there?"), config=config, context=Context())
    texts = [m.text for m in agent.get_state(config).values["messages"]]
    assert "x" * 5001 not in texts
    assert texts[-2:] == ["still there?", "scripted reply to: still there?"]


@pytest.mark.parametrize("said", ["tea\x00time", "half a pair \ud83d"])
def test_text_the_database_cannot_store_fails_one_run_and_leaves_the_thread_usable(
    said: str, checkpointer: PostgresSaver, scripted_llm: ScriptedOpenAI
) -> None:
    agent = make_graph(checkpointer=checkpointer)
    config = thread_config(f"t-unstorable-{len(said)}")
    agent.invoke(user_turn("hello"), config=config, context=Context())
    with pytest.raises(UnstorableTextError, match="cannot be stored; nothing was sent or saved"):
        agent.invoke(user_turn(said), config=config, context=Context())
    for text in ("still there?", "and now?"):
        agent.invoke(user_turn(text), config=config, context=Context())
    texts = [m.text for m in agent.get_state(config).values["messages"]]
    assert said not in texts
    assert texts[-2:] == ["and now?", "scripted reply to: and now?"]


def test_a_reply_holding_a_nul_is_queued_for_extraction_without_it(
    checkpointer: PostgresSaver, scripted_llm: ScriptedOpenAI
) -> None:
    """What the model or a tool says is not the caller's to refuse: the queue's own copy
    replaces what the database cannot store, and the turn and the next one go through."""
    scripted_llm.reply("a reply with a \x00 inside")
    agent = make_graph(checkpointer=checkpointer)
    config = thread_config("t-nul-reply")
    agent.invoke(user_turn("say something odd"), config=config, context=Context())
    agent.invoke(user_turn("and again"), config=config, context=Context())
    texts = [m.text for m in agent.get_state(config).values["messages"]]
    assert texts[1] == "a reply with a \x00 inside"
    assert texts[-1] == "scripted reply to: and again"
