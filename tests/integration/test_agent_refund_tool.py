"""The agent starts an approval workflow through its tool and tells the user it is pending."""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.postgres import PostgresSaver
from psycopg_pool import ConnectionPool

from graphs.agent import make_graph
from graphs.approvals import Approvals
from recollect import thread_config, user_turn
from recollect.approvals.machine import WorkflowState
from recollect.state.context import Context
from recollect.store.pool import use_pool
from tests.support.scripted_openai import ScriptedOpenAI


def test_request_refund_starts_a_durable_workflow_owned_by_the_caller(
    pool: ConnectionPool[Any], checkpointer: PostgresSaver, scripted_llm: ScriptedOpenAI
) -> None:
    scripted_llm.reply_tool_calls(
        [
            {
                "name": "request_refund",
                "args": {"order_id": "8842-B", "amount": 249.0, "reason": "charged twice"},
            }
        ]
    )
    scripted_llm.reply("Your refund is pending a manager's approval.")
    agent = make_graph(checkpointer=checkpointer)
    ctx = Context(user_id="dana", org_id="acme")
    with use_pool(pool):
        result = agent.invoke(
            user_turn("I was charged twice for 8842-B, $249. Refund please."),
            config=thread_config("dana-chat"),
            context=ctx,
        )
    kinds = [m.type for m in result["messages"]]
    assert kinds == ["human", "ai", "tool", "ai"]
    tool_reply = result["messages"][2].text
    assert "is pending" in tool_reply
    assert "8842-B (249.00 USD)" in tool_reply
    assert result["messages"][-1].text == "Your refund is pending a manager's approval."
    # The model saw the tool's answer and was offered both tools.
    second_call = scripted_llm.chat_requests[-1]
    assert second_call["messages"][-1]["role"] == "tool"
    assert {t["function"]["name"] for t in second_call["tools"]} == {
        "request_refund",
        "refund_status",
    }

    approvals = Approvals(pool)
    [workflow] = approvals.workflows(org_id="acme")
    assert (workflow.org_id, workflow.user_id) == ("acme", "dana")
    assert workflow.thread_id == f"approval-{workflow.id}"
    assert workflow.origin_thread_id == "dana-chat"
    assert workflow.id in tool_reply
    view = approvals.show(workflow.id, org_id="acme")
    assert view.state is WorkflowState.SUBMITTED_FOR_REVIEW
    assert view.awaiting_review
    # The conversation's own thread is not interrupted: the workflow waits on its own thread.
    assert not agent.get_state(thread_config("dana-chat")).interrupts
    assert agent.get_state(thread_config("dana-chat")).next == ()

    scripted_llm.reply_tool_calls(
        [
            {
                "name": "request_refund",
                "args": {"order_id": "8842-B", "amount": 249.0, "reason": "still waiting"},
            }
        ]
    )
    scripted_llm.reply("It is already pending.")
    with use_pool(pool):
        repeated = agent.invoke(
            user_turn("refund 8842-B please!"), config=thread_config("dana-chat"), context=ctx
        )
    assert "already exists and is submitted_for_review; no second request was filed" in (
        repeated["messages"][-2].text
    )
    assert len(approvals.workflows(org_id="acme")) == 1

    scripted_llm.reply_tool_calls([{"name": "refund_status", "args": {"request_id": workflow.id}}])
    scripted_llm.reply("Still waiting.")
    with use_pool(pool):
        approvals.approve(workflow.id, org_id="acme", by="maria")
        status = agent.invoke(user_turn("status?"), config=thread_config("dana-chat"), context=ctx)
    status_reply = status["messages"][-2].text
    assert f"Refund request {workflow.id} is completed; approved by maria" in status_reply
    assert "paid" in status_reply


def test_another_user_cannot_read_a_refund_status(
    pool: ConnectionPool[Any], checkpointer: PostgresSaver, scripted_llm: ScriptedOpenAI
) -> None:
    with use_pool(pool):
        view = Approvals(pool).request(
            org_id="acme", user_id="dana", order_id="1", amount=3, reason="late"
        )
        scripted_llm.reply_tool_calls([{"name": "refund_status", "args": {"request_id": view.id}}])
        scripted_llm.reply("ok")
        result = make_graph(checkpointer=checkpointer).invoke(
            user_turn("what about it?"),
            config=thread_config("omar-chat"),
            context=Context(user_id="omar", org_id="acme"),
        )
    assert result["messages"][-2].text == f"no refund request {view.id!r} of yours was found"


def test_a_bad_tool_call_from_the_model_is_answered_clearly_and_files_nothing(
    pool: ConnectionPool[Any], checkpointer: PostgresSaver
) -> None:
    """The offline model calls a tool the user names, with the smallest valid arguments."""
    agent = make_graph(checkpointer=checkpointer)
    with use_pool(pool):
        result = agent.invoke(
            user_turn("please request_refund for me"),
            config=thread_config("offline-chat"),
            context=Context(user_id="dana", org_id="acme"),
        )
    tool_reply = next(m for m in result["messages"] if m.type == "tool").text
    assert tool_reply.startswith("The refund request was not filed: invalid refund request:")
    assert "amount: Input should be greater than 0" in tool_reply
    assert result["messages"][-1].text.startswith("[offline model]")
    assert Approvals(pool).workflows(org_id="acme") == []
