"""`langgraph dev` serves the orchestrator over HTTP: workers fan out, their messages stay out
of the thread's state, and the finished thread's checkpoints are pruned like the agent's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from langgraph_sdk.client import SyncLangGraphClient

from recollect.store.server import CONNECTION_KWARGS
from tests.support.langgraph_dev import ALICE_KEY, client_for, langgraph_dev

RETAIN = 2
CONTEXT = {"extraction": False}


@pytest.fixture
def dev_client(database_uri: str, tmp_path: Path) -> Iterator[SyncLangGraphClient]:
    env = {"RECOLLECT_DATABASE_URI": database_uri, "RECOLLECT_CHECKPOINT_RETENTION": str(RETAIN)}
    with langgraph_dev(env, tmp_path / "dev.log") as url:
        yield client_for(url, ALICE_KEY)


def test_the_orchestrator_runs_over_http_within_retention(
    dev_client: SyncLangGraphClient, database_uri: str
) -> None:
    thread = dev_client.threads.create()["thread_id"]
    for n in range(4):
        result = dev_client.runs.wait(
            thread,
            "orchestrator",
            input={
                "task": f"Find the venue {n}\nCheck the budget\nList dietary needs",
                "blackboard": {"budget": "1200 EUR"},
            },
            context=CONTEXT,
        )
    assert isinstance(result, dict)
    assert result["answer"].startswith("[offline model]")
    assert [r["worker_id"] for r in result["results"]] == ["w1", "w2", "w3"]
    assert all(r["round"] == 4 for r in result["results"])
    assert any(f["sources"] == ["board:budget"] for f in result["facts"])
    assert all(0 < r["context_tokens"] <= 1500 + 300 for r in result["results"])
    state = dev_client.threads.get_state(thread)["values"]
    assert isinstance(state, dict)
    assert "messages" not in state
    assert "You are one researcher" not in str(state), "a worker's prompt leaked into state"
    with psycopg.connect(database_uri, **CONNECTION_KWARGS) as conn:
        row = conn.execute(
            "SELECT count(DISTINCT metadata->>'run_id') AS n FROM checkpoints WHERE thread_id = %s",
            (thread,),
        ).fetchone()
    assert row is not None
    assert RETAIN <= row["n"] <= RETAIN + 1, "the agent's bounds: the newest `retain` turns"
