"""A failed or interrupted tool call never bricks a thread: later turns all answer.

The scripted server rejects what the OpenAI API rejects (a `tool_calls` message not followed
by its results), so any invalid prompt fails these tests with the provider's 400.
"""

from __future__ import annotations

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.postgres import PostgresSaver

from graphs.agent import make_graph
from recollect import thread_config, user_turn
from recollect.history.window import CANCELLED_TOOL_CALL
from recollect.state.context import Context
from tests.support.scripted_openai import ScriptedOpenAI, message_order_errors


@tool
def lookup_order(order_id: str) -> str:
    """Look up an order in the warehouse.

    Args:
        order_id: the order to look up.
    """
    raise RuntimeError(f"warehouse API timed out looking up {order_id}")


def _assert_results_follow_calls(messages: list[object]) -> None:
    for index, message in enumerate(messages):
        if isinstance(message, AIMessage) and message.tool_calls:
            following = messages[index + 1 : index + 1 + len(message.tool_calls)]
            assert all(isinstance(m, ToolMessage) for m in following), messages
            ids = {m.tool_call_id for m in following if isinstance(m, ToolMessage)}
            assert ids == {c["id"] for c in message.tool_calls}


def test_a_tool_that_raises_is_answered_as_an_error_and_three_more_turns_answer(
    checkpointer: PostgresSaver, scripted_llm: ScriptedOpenAI
) -> None:
    agent = make_graph(checkpointer=checkpointer, tools=[lookup_order])
    config = thread_config("t-tool-raises")
    ctx = Context(max_history_tokens=200)
    scripted_llm.reply_tool_calls([{"name": "lookup_order", "args": {"order_id": "8842-B"}}])
    scripted_llm.reply("The warehouse is not answering; I could not look it up.")
    result = agent.invoke(user_turn("Where is order 8842-B?"), config=config, context=ctx)
    error = next(m for m in result["messages"] if isinstance(m, ToolMessage))
    assert error.status == "error"
    assert "RuntimeError: warehouse API timed out looking up 8842-B" in error.text
    assert "\n" not in error.text
    assert result["messages"][-1].text.startswith("The warehouse is not answering")
    for turn in range(3):
        question = f"follow-up {turn} " + "words " * 40
        answer = agent.invoke(user_turn(question), config, context=ctx)
        assert answer["messages"][-1].text == f"scripted reply to: {question}"
    for request in scripted_llm.chat_requests:
        assert message_order_errors(request["messages"]) == []


def test_an_interrupted_tool_call_is_closed_and_three_more_turns_answer(
    checkpointer: PostgresSaver, scripted_llm: ScriptedOpenAI
) -> None:
    agent = make_graph(checkpointer=checkpointer, tools=[lookup_order])
    config = thread_config("t-tool-interrupted")
    ctx = Context(max_history_tokens=150)
    scripted_llm.reply_tool_calls([{"name": "lookup_order", "args": {"order_id": "8842-B"}}])
    # The run stops between the model and its tools (a crash, a deploy, a cancelled run).
    agent.invoke(
        user_turn("Where is order 8842-B?"), config=config, context=ctx, interrupt_before=["tools"]
    )
    stuck = agent.get_state(config).values["messages"]
    assert isinstance(stuck[-1], AIMessage)
    assert stuck[-1].tool_calls
    for turn in range(3):
        answer = agent.invoke(user_turn(f"hello again {turn}"), config=config, context=ctx)
        assert answer["messages"][-1].text == f"scripted reply to: hello again {turn}"
    for request in scripted_llm.chat_requests:
        assert message_order_errors(request["messages"]) == []
    state = agent.get_state(config).values
    history = [*state.get("unfolded", []), *state["messages"]]
    closed = [m for m in history if isinstance(m, ToolMessage)]
    assert [m.text for m in closed] == [CANCELLED_TOOL_CALL]
    _assert_results_follow_calls(state["messages"])
    # The question comes before the reply in every prompt, as it was asked.
    first_prompt_after = scripted_llm.chat_requests[1]["messages"]
    roles = [m["role"] for m in first_prompt_after[1:]]
    assert roles == ["user", "assistant", "tool", "user"]
