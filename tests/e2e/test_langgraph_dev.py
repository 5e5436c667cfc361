"""`langgraph dev` serves the agent over HTTP and persists threads to our Postgres."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from langgraph_sdk.client import SyncLangGraphClient

from recollect.store.server import CONNECTION_KWARGS
from tests.support.langgraph_dev import ALICE_KEY, client_for, langgraph_dev


@pytest.fixture
def dev_client(database_uri: str, tmp_path: Path) -> Iterator[SyncLangGraphClient]:
    with langgraph_dev({"RECOLLECT_DATABASE_URI": database_uri}, tmp_path / "dev.log") as url:
        yield client_for(url, ALICE_KEY)


def test_a_thread_runs_over_http_and_is_checkpointed_in_postgres(
    dev_client: SyncLangGraphClient, database_uri: str
) -> None:
    thread = dev_client.threads.create()
    for text in ("hello from Studio", "second turn"):
        result = dev_client.runs.wait(
            thread["thread_id"],
            "agent",
            input={"messages": [{"role": "human", "content": text}]},
            context={"max_history_tokens": 2000},
        )
    assert isinstance(result, dict)
    reply = result["messages"][-1]["content"]
    assert reply.startswith("[offline model]")
    assert "second turn" in reply
    assert [m["type"] for m in result["messages"]] == ["human", "ai", "human", "ai"]
    assert result["context_tokens"]["total"] > 0
    with psycopg.connect(database_uri, **CONNECTION_KWARGS) as conn:
        row = conn.execute(
            "SELECT count(*) AS n FROM checkpoints WHERE thread_id = %s", (thread["thread_id"],)
        ).fetchone()
    assert row is not None
    assert row["n"] >= 4
