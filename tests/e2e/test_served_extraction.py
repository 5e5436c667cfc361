"""Plain `langgraph dev` extracts facts with no process beside it: the served app's lifespan
runs the memory worker. Two servers on one database share the queue, and every turn is
extracted exactly once."""

from __future__ import annotations

import re
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import psycopg
import pytest

from recollect.store.server import CONNECTION_KWARGS
from tests.support.langgraph_dev import (
    ALICE_KEY,
    BOB_KEY,
    DANA_KEY,
    GINA_KEY,
    client_for,
    langgraph_dev,
    project_config_in,
)

IDLE_S = 1.0
DEADLINE_S = 90.0
"""How long the facts may take at most on a busy machine; the test returns as they appear."""
LANGUAGES = ("Go", "Rust", "Zig", "Elixir", "Haskell", "OCaml")


def stored_facts(database_uri: str) -> list[str]:
    with psycopg.connect(database_uri, **CONNECTION_KWARGS) as conn:
        rows = conn.execute("SELECT text FROM fact_candidates ORDER BY id").fetchall()
    return [row["text"] for row in rows]


def _wait_for(database_uri: str, count: int) -> tuple[list[str], float]:
    start = time.monotonic()
    facts = stored_facts(database_uri)
    while len(facts) < count and time.monotonic() - start < DEADLINE_S:
        time.sleep(0.2)
        facts = stored_facts(database_uri)
    return facts, time.monotonic() - start


def test_plain_langgraph_dev_stores_facts_after_a_conversation(
    database_uri: str, tmp_path: Path, record_property: Any
) -> None:
    env = {"RECOLLECT_DATABASE_URI": database_uri}
    with langgraph_dev(env, tmp_path / "dev.log") as url:
        client = client_for(url, ALICE_KEY)
        thread = client.threads.create()["thread_id"]
        for text in ("I prefer Go", "we deploy to Fly.io"):
            client.runs.wait(
                thread,
                "agent",
                input={"messages": [{"role": "human", "content": text}]},
                context={"extract_after_idle_s": IDLE_S},
            )
        facts, seconds = _wait_for(database_uri, 2)
    record_property("seconds_from_last_reply_to_facts", round(seconds, 2))
    log = (tmp_path / "dev.log").read_text()
    assert facts == ["Prefers Go", "Team deploys to Fly.io"], log[-3000:]
    print(f"facts stored {seconds:.1f} s after the last reply (debounce {IDLE_S} s)")


def test_the_server_worker_can_be_left_to_a_process_of_its_own(
    database_uri: str, tmp_path: Path
) -> None:
    env = {"RECOLLECT_DATABASE_URI": database_uri, "RECOLLECT_SERVER_WORKER": "off"}
    with langgraph_dev(env, tmp_path / "dev.log") as url:
        client = client_for(url, ALICE_KEY)
        thread = client.threads.create()["thread_id"]
        client.runs.wait(
            thread,
            "agent",
            input={"messages": [{"role": "human", "content": "I prefer Go"}]},
            context={"extract_after_idle_s": 0.1},
        )
        time.sleep(3)
        assert stored_facts(database_uri) == []


def test_two_servers_share_the_queue_and_extract_every_turn_once(
    database_uri: str, tmp_path: Path, record_property: Any
) -> None:
    env = {"RECOLLECT_DATABASE_URI": database_uri}
    keys = (ALICE_KEY, BOB_KEY, DANA_KEY, GINA_KEY)
    with (
        _server(env, tmp_path, "a") as first,
        _server(env, tmp_path, "b") as second,
    ):

        def converse(index: int) -> None:
            """One user's thread on one of the servers (each keeps its own threads; their
            turns wait in the one queue, for whichever server's worker claims them first)."""
            client = client_for((first, second)[index % 2], keys[index % len(keys)])
            thread = client.threads.create()["thread_id"]
            for language in LANGUAGES[index % 2 :: 2]:
                client.runs.wait(
                    thread,
                    "agent",
                    input={"messages": [{"role": "human", "content": f"I prefer {language}"}]},
                    context={"extract_after_idle_s": 0.2, "extract_every_turns": 1},
                )

        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(converse, range(8)))
        turns = 8 * 3
        _, seconds = _wait_for(database_uri, turns)
        time.sleep(2)  # a second extraction of any turn would land by now
        counts = _extraction_counts(database_uri)
    record_property("turns", turns)
    record_property("seconds_to_all_facts", round(seconds, 2))
    assert len(counts) == turns, counts
    assert set(counts.values()) == {1}, {m: n for m, n in counts.items() if n != 1}
    assert len(stored_facts(database_uri)) == turns
    served = [_jobs_run(tmp_path / name) for name in ("a.log", "b.log")]
    print(f"{turns} turns extracted once each in {seconds:.1f} s; jobs per server: {served}")


def _server(env: dict[str, str], tmp_path: Path, name: str) -> AbstractContextManager[str]:
    """A server of its own folder: each keeps its own runtime; they share the database."""
    folder = tmp_path / name
    folder.mkdir()
    config = project_config_in(folder)
    return langgraph_dev(env, tmp_path / f"{name}.log", config=config, cwd=folder)


def _extraction_counts(database_uri: str) -> dict[str, int]:
    """Each user message queued for extraction, and how many candidate facts name it."""
    with psycopg.connect(database_uri, **CONNECTION_KWARGS) as conn:
        rows = conn.execute(
            """
            SELECT m.message_id, m.extracted_at IS NOT NULL AS done,
                   (SELECT count(*) FROM fact_candidates AS c
                    WHERE m.message_id = ANY(c.source_message_ids)) AS facts
            FROM memory_job_messages AS m WHERE m.role = 'user'
            """
        ).fetchall()
    return {row["message_id"]: row["facts"] if row["done"] else 0 for row in rows}


def _jobs_run(log: Path) -> int:
    """Distinct jobs the server's worker finished, by its log."""
    return len(set(re.findall(r"memory job (\d+): \d+ stored", log.read_text())))


@pytest.mark.parametrize("extra", [[], ["--"]])
def test_langgraph_options_follow_a_double_dash(extra: list[str]) -> None:
    from recollect.cli.dev import langgraph_command

    command = langgraph_command([*extra, "--port", "2025"])
    assert command[1:] == ["dev", "--port", "2025"]
