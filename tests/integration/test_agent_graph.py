"""The agent graph through the real OpenAI client, checkpointed in Postgres."""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.postgres import PostgresSaver

from graphs.agent import make_graph
from recollect import thread_config, user_turn
from recollect.history.summary import FOLD_INSTRUCTIONS
from recollect.state.context import Context
from tests.support.scripted_openai import ScriptedOpenAI


def test_turn_reaches_the_model_and_is_checkpointed(
    checkpointer: PostgresSaver, scripted_llm: ScriptedOpenAI
) -> None:
    scripted_llm.reply("Hello Dana.")
    agent = make_graph(checkpointer=checkpointer)
    config = thread_config("t-1")
    result = agent.invoke(user_turn("Hi, I'm Dana"), config=config, context=Context())
    assert result["messages"][-1].text == "Hello Dana."
    sent = scripted_llm.last_messages()
    assert sent[0]["role"] == "system"
    assert sent[-1] == {"role": "user", "content": "Hi, I'm Dana"}
    restored = make_graph(checkpointer=checkpointer).get_state(config)
    assert [m.text for m in restored.values["messages"]] == ["Hi, I'm Dana", "Hello Dana."]
    assert restored.values["context_tokens"]["total"] > 0


def test_trim_shrinks_the_checkpointed_message_list(
    checkpointer: PostgresSaver, scripted_llm: ScriptedOpenAI
) -> None:
    agent = make_graph(checkpointer=checkpointer)
    config = thread_config("t-trim")
    ctx = Context(max_history_tokens=120)
    sizes = []
    for turn in range(12):
        agent.invoke(user_turn(f"turn {turn}: " + "words " * 30), config=config, context=ctx)
        sizes.append(len(agent.get_state(config).values["messages"]))
    assert max(sizes) < 8, sizes
    assert sizes[-1] < 2 * 12
    first = agent.get_state(config).values["messages"][0]
    assert first.type == "human"
    assert first.text.startswith("turn 1")  # the oldest kept turn is recent, not turn 0


def test_system_message_in_the_thread_survives_trimming(
    checkpointer: PostgresSaver, scripted_llm: ScriptedOpenAI
) -> None:
    from langchain_core.messages import HumanMessage, SystemMessage

    agent = make_graph(checkpointer=checkpointer)
    config = thread_config("t-system")
    agent.invoke(
        {"messages": [SystemMessage(content="Answer in French."), HumanMessage(content="hi")]},
        config=config,
        context=Context(max_history_tokens=80),
    )
    for _turn in range(6):
        agent.invoke(user_turn("more " * 25), config=config, context=Context(max_history_tokens=80))
    messages = agent.get_state(config).values["messages"]
    assert messages[0].type == "system"
    replies = [r for r in scripted_llm.chat_requests if not _is_fold(r)]
    assert "Answer in French." in replies[-1]["messages"][0]["content"]


def _is_fold(request: dict[str, Any]) -> bool:
    """Summary folds are model calls too; these tests look at the reply calls."""
    return str(request["messages"][0]["content"]).startswith(FOLD_INSTRUCTIONS[:40])
