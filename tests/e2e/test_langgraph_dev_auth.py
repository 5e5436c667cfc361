"""`langgraph dev` as two users with two keys, trying to read each other.

Alice talks to the agent and has long-term memory; Bob, with his own key, tries every way in:
her thread by id, its state, a search, a run on it, and runs on his own thread whose context
names her. None of it works, nothing of hers reaches his state, and while the server serves,
Postgres sees no superuser or table-owner connection from it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from langgraph_sdk.client import SyncLangGraphClient
from langgraph_sdk.errors import APIStatusError
from psycopg_pool import ConnectionPool

from recollect.longterm.facts import LongTermMemory
from recollect.longterm.records import FactCategory, NewFact
from recollect.store.roles import app_uri
from recollect.store.scope import Scope
from recollect.store.server import CONNECTION_KWARGS, open_pool
from tests.support.langgraph_dev import ALICE_KEY, BOB_KEY, client_for, langgraph_dev

ALICE_SECRETS = ("alice@acme-mail.io", "locker code 4471", "office 7 north")
AGENT_INPUT = "messages"


@pytest.fixture
def served(database_uri: str, tmp_path: Path) -> Iterator[str]:
    pool: ConnectionPool[Any] = open_pool(app_uri(database_uri), max_size=2, name="seed")
    try:
        memory = LongTermMemory(pool)
        alice = Scope.for_user("acme", "alice")
        memory.remember(
            alice, NewFact(text="Her locker code 4471", category=FactCategory.BIOGRAPHICAL)
        )
        memory.remember(
            alice, NewFact(text="Works in office 7 North", category=FactCategory.BIOGRAPHICAL)
        )
    finally:
        pool.close()
    with langgraph_dev({"RECOLLECT_DATABASE_URI": database_uri}, tmp_path / "dev.log") as url:
        yield url


def _say(client: SyncLangGraphClient, thread_id: str, text: str, **context: Any) -> dict[str, Any]:
    result = client.runs.wait(
        thread_id,
        "agent",
        input={AGENT_INPUT: [{"role": "human", "content": text}]},
        context={"extract_after_idle_s": 3600, **context},
    )
    assert isinstance(result, dict)
    return result


def _status_of(call: Callable[[], Any]) -> int:
    """The HTTP status a refused SDK call came back with (the SDK raises either its own
    typed errors or httpx's)."""
    try:
        call()
    except (APIStatusError, httpx.HTTPStatusError) as exc:
        return exc.response.status_code
    raise AssertionError("the call succeeded")


def test_no_key_or_an_unknown_key_is_401(served: str) -> None:
    for headers in ({}, {"Authorization": "Bearer not-a-key-0123456789"}, {"Authorization": "x"}):
        response = httpx.post(f"{served}/threads/search", json={}, headers=headers, timeout=30)
        assert response.status_code == 401, (headers, response.text)
        assert "key" in response.text or "credentials" in response.text


def test_bob_cannot_reach_alice_in_any_way(served: str, database_uri: str) -> None:
    alice = client_for(served, ALICE_KEY)
    bob = client_for(served, BOB_KEY)
    alice_thread = alice.threads.create()["thread_id"]
    reply = _say(alice, alice_thread, f"My email is {ALICE_SECRETS[0]}; where is my locker?")
    assert "4471" in json.dumps(reply)  # her own memory reaches her own prompt

    hello = {AGENT_INPUT: [{"role": "human", "content": "hi"}]}
    assert _status_of(lambda: bob.threads.get(alice_thread)) == 404
    assert _status_of(lambda: bob.threads.get_state(alice_thread)) == 404
    assert _status_of(lambda: bob.threads.get_history(alice_thread)) == 404
    assert _status_of(lambda: bob.runs.wait(alice_thread, "agent", input=hello)) == 404
    assert _status_of(lambda: bob.runs.list(alice_thread)) == 404
    assert _status_of(lambda: bob.threads.update_state(alice_thread, {"messages": []})) == 404
    assert _status_of(lambda: bob.threads.delete(alice_thread)) == 404
    assert alice_thread not in [t["thread_id"] for t in bob.threads.search(limit=100)]
    assert alice_thread in [t["thread_id"] for t in alice.threads.search(limit=100)]

    bob_thread = bob.threads.create()["thread_id"]
    for forged in ({"user_id": "alice"}, {"user_id": "ALICE", "org_id": "acme"}, {"org_id": "x"}):
        status = _status_of(lambda f=forged: _say(bob, bob_thread, "my locker code?", **f))
        assert status == 403, forged
    own = _say(bob, bob_thread, "what is my locker code, office and email?")
    state = json.dumps(bob.threads.get_state(bob_thread)) + json.dumps(own)
    for secret in ALICE_SECRETS:
        assert secret.lower() not in state.lower(), secret
    assert "4471" not in state


def test_the_server_holds_no_superuser_or_owner_connection(served: str, database_uri: str) -> None:
    alice = client_for(served, ALICE_KEY)
    thread = alice.threads.create()["thread_id"]
    _say(alice, thread, "hello")
    with psycopg.connect(database_uri, **CONNECTION_KWARGS) as conn:
        rows = conn.execute(
            """
            SELECT a.usename, r.rolsuper,
                   EXISTS (SELECT 1 FROM pg_tables t WHERE t.tableowner = a.usename) AS owns
            FROM pg_stat_activity a JOIN pg_roles r ON r.rolname = a.usename
            WHERE a.datname = current_database() AND a.pid <> pg_backend_pid()
            """
        ).fetchall()
    assert rows, "the server holds connections while it serves"
    assert [r for r in rows if r["rolsuper"] or r["owns"]] == []
    served_as = {r["usename"] for r in rows}
    assert "recollect_app" in served_as
    assert served_as <= {"recollect_app", "recollect_worker"}, "the extraction worker's role"


def test_an_oversized_message_is_refused_at_the_door_and_nothing_is_stored(
    served: str, database_uri: str
) -> None:
    alice = client_for(served, ALICE_KEY)
    thread = alice.threads.create()["thread_id"]
    for size in (100_000, 10_000_000):
        huge = {AGENT_INPUT: [{"role": "human", "content": "x" * size}]}
        assert _status_of(lambda h=huge: alice.runs.wait(thread, "agent", input=h)) == 413
    with psycopg.connect(database_uri, **CONNECTION_KWARGS) as conn:
        row = conn.execute(
            "SELECT count(*) AS n FROM checkpoints WHERE thread_id = %s", (thread,)
        ).fetchone()
    assert row is not None
    assert row["n"] == 0
    reply = _say(alice, thread, "a normal message after that")
    assert reply["messages"][-1]["content"].startswith("[offline model]")
