"""`make dev` (`recollect dev`): a conversation over HTTP has its facts stored once its
debounce passes, with no process started by hand beside the server."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from recollect.store.server import CONNECTION_KWARGS
from tests.support.langgraph_dev import ALICE_KEY, client_for, langgraph_dev

IDLE_S = 1.0
DEADLINE_S = 90.0
"""How long the facts may take at most on a busy machine; the test returns as they appear."""


def stored_facts(database_uri: str) -> list[str]:
    with psycopg.connect(database_uri, **CONNECTION_KWARGS) as conn:
        rows = conn.execute("SELECT text FROM fact_candidates ORDER BY id").fetchall()
    return [row["text"] for row in rows]


def test_facts_are_stored_after_a_served_conversation_with_no_second_command(
    database_uri: str, tmp_path: Path, record_property: Any
) -> None:
    env = {"RECOLLECT_DATABASE_URI": database_uri}
    with langgraph_dev(env, tmp_path / "dev.log", with_worker=True) as url:
        client = client_for(url, ALICE_KEY)
        thread = client.threads.create()["thread_id"]
        for text in ("I prefer Go", "we deploy to Fly.io"):
            client.runs.wait(
                thread,
                "agent",
                input={"messages": [{"role": "human", "content": text}]},
                context={"extract_after_idle_s": IDLE_S},
            )
        replied = time.monotonic()
        facts = stored_facts(database_uri)
        while len(facts) < 2 and time.monotonic() - replied < DEADLINE_S:
            time.sleep(0.2)
            facts = stored_facts(database_uri)
        seconds = time.monotonic() - replied
    record_property("seconds_from_last_reply_to_facts", round(seconds, 2))
    assert facts == ["Prefers Go", "Team deploys to Fly.io"], (tmp_path / "dev.log").read_text()[
        -3000:
    ]
    print(f"facts stored {seconds:.1f} s after the last reply (debounce {IDLE_S} s)")


@pytest.mark.parametrize("extra", [[], ["--"]])
def test_langgraph_options_follow_a_double_dash(extra: list[str]) -> None:
    from recollect.cli.dev import langgraph_command

    command = langgraph_command([*extra, "--port", "2025"])
    assert command[1:] == ["dev", "--port", "2025"]
