"""The approval workflow over `langgraph dev`'s HTTP API: interrupt, refused answer, resume."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langgraph_sdk import get_sync_client
from langgraph_sdk.client import SyncLangGraphClient

from graphs.approvals import Approvals
from recollect.store.server import CONNECTION_KWARGS, open_pool
from tests.support.langgraph_dev import langgraph_dev
from tests.support.scripted_openai import ScriptedOpenAI

REVIEWER = {"user_id": "maria", "org_id": "acme", "permissions": ["reviewer"]}


@pytest.fixture
def dev_client(
    database_uri: str, tmp_path: Path, scripted_llm: ScriptedOpenAI
) -> Iterator[SyncLangGraphClient]:
    env = {
        "RECOLLECT_DATABASE_URI": database_uri,
        "OPENAI_BASE_URL": scripted_llm.base_url,
        "OPENAI_API_KEY": "test-key",
        "RECOLLECT_MODEL_MAX_RETRIES": "0",
    }
    with langgraph_dev(env, tmp_path / "dev.log") as url:
        yield get_sync_client(url=url)


def _gate(client: SyncLangGraphClient, thread_id: str) -> dict[str, Any]:
    state = client.threads.get_state(thread_id)
    [interrupt] = state["interrupts"]
    value: dict[str, Any] = interrupt["value"]
    return value


def test_interrupt_and_resume_through_the_http_api(
    dev_client: SyncLangGraphClient, database_uri: str
) -> None:
    thread_id = dev_client.threads.create()["thread_id"]
    started = dev_client.runs.wait(
        thread_id,
        "approval",
        input={"request": {"order_id": "8842-B", "amount": "249", "reason": "charged twice"}},
        context={"user_id": "dana", "org_id": "acme"},
    )
    assert isinstance(started, dict)
    assert started["workflow_state"] == "submitted_for_review"
    gate = _gate(dev_client, thread_id)
    assert gate["workflow_id"] == thread_id
    assert gate["request"]["amount"] == "249.00"
    assert gate["owner"] == {"org_id": "acme", "user_id": "dana"}
    assert gate["response_schema"]["title"] == "ReviewDecision"

    refused = dev_client.runs.wait(
        thread_id, "approval", command={"resume": {"decision": "approve"}}, context=REVIEWER
    )
    assert isinstance(refused, dict)
    assert refused["workflow_state"] == "submitted_for_review"
    assert "by: Field required" in _gate(dev_client, thread_id)["error"]

    finished = dev_client.runs.wait(
        thread_id,
        "approval",
        command={"resume": {"decision": "approve", "by": "maria", "note": "verified"}},
        context=REVIEWER,
    )
    assert isinstance(finished, dict)
    assert finished["workflow_state"] == "completed"
    assert finished["decision"]["by"] == "maria"
    assert [e["to_state"] for e in finished["audit"]] == [
        "draft",
        "submitted_for_review",
        "approved",
        "executing",
        "completed",
    ]
    assert dev_client.threads.get_state(thread_id)["interrupts"] == []
    with psycopg.connect(database_uri, **CONNECTION_KWARGS) as conn:
        refunds = conn.execute(
            "SELECT approved_by, amount::text AS amount FROM refunds WHERE workflow_id = %s",
            (thread_id,),
        ).fetchall()
        checkpoints = conn.execute(
            "SELECT count(*) AS n FROM checkpoints WHERE thread_id = %s", (thread_id,)
        ).fetchone()
    assert refunds == [{"approved_by": "maria", "amount": "249.00"}]
    assert checkpoints is not None
    assert checkpoints["n"] >= 5


def test_the_agent_served_by_langgraph_dev_files_a_workflow_a_reviewer_can_approve(
    dev_client: SyncLangGraphClient, database_uri: str, scripted_llm: ScriptedOpenAI
) -> None:
    scripted_llm.reply_tool_calls(
        [{"name": "request_refund", "args": {"order_id": "A-1", "amount": 20, "reason": "late"}}]
    )
    scripted_llm.reply("Filed; a manager will review it.")
    thread_id = dev_client.threads.create()["thread_id"]
    result = dev_client.runs.wait(
        thread_id,
        "agent",
        input={"messages": [{"role": "human", "content": "refund order A-1 please"}]},
        context={"user_id": "dana", "org_id": "acme"},
    )
    assert isinstance(result, dict)
    tool_reply = result["messages"][2]["content"]
    assert "is pending" in tool_reply
    assert result["messages"][-1]["content"] == "Filed; a manager will review it."

    pool = open_pool(database_uri, max_size=2, name="reviewer")
    try:
        approvals = Approvals(pool)
        [workflow] = approvals.workflows(org_id="acme")
        assert workflow.origin_thread_id == thread_id
        assert workflow.id in tool_reply
        view = approvals.approve(workflow.id, org_id="acme", by="maria")
    finally:
        pool.close()
    assert view.state.value == "completed"
    assert len(view.refunds) == 1
