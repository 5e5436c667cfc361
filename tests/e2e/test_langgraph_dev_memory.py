"""On LangGraph Platform the background job is the exported `memory` graph, scheduled by the
client with `after_seconds` and `multitask_strategy="rollback"`; `langgraph dev` runs it here."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from langgraph_sdk.client import SyncLangGraphClient
from langgraph_sdk.errors import NotFoundError

from recollect.store.server import CONNECTION_KWARGS
from tests.support.langgraph_dev import ALICE_KEY, client_for, langgraph_dev

CONTEXT = {"extract_after_idle_s": 3600}


@pytest.fixture
def dev_client(database_uri: str, tmp_path: Path) -> Iterator[SyncLangGraphClient]:
    with langgraph_dev({"RECOLLECT_DATABASE_URI": database_uri}, tmp_path / "dev.log") as url:
        yield client_for(url, ALICE_KEY)


def test_scheduled_memory_runs_debounce_by_rollback_and_extract_once(
    dev_client: SyncLangGraphClient, database_uri: str
) -> None:
    thread = dev_client.threads.create()["thread_id"]
    memory_thread = dev_client.threads.create()["thread_id"]
    scheduled = []
    for text in ("I prefer Go", "we deploy to Fly.io"):
        dev_client.runs.wait(
            thread,
            "agent",
            input={"messages": [{"role": "human", "content": text}]},
            context=CONTEXT,
        )
        scheduled.append(
            dev_client.runs.create(
                memory_thread,
                "memory",
                input={"thread_id": thread},
                context=CONTEXT,
                after_seconds=5,
                multitask_strategy="rollback",
            )
        )
    result = dev_client.runs.join(memory_thread, scheduled[-1]["run_id"])
    assert isinstance(result, dict)
    [outcome] = result["outcomes"]
    assert (outcome["status"], outcome["stored"]) == ("done", 2)
    with pytest.raises(NotFoundError):  # the earlier run was rolled back, never executed
        dev_client.runs.get(memory_thread, scheduled[0]["run_id"])
    with psycopg.connect(database_uri, **CONNECTION_KWARGS) as conn:
        facts = conn.execute("SELECT text FROM fact_candidates ORDER BY id").fetchall()
        job_states = conn.execute("SELECT status FROM memory_jobs").fetchall()
    assert [f["text"] for f in facts] == ["Prefers Go", "Team deploys to Fly.io"]
    assert [j["status"] for j in job_states] == ["done"]
