"""The worker a server starts is a process of its own: stopped with the server, started again
when it exits on its own, and gone when the server is killed outright."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable

import psycopg
import pytest

from recollect.prebuilt import served_worker
from recollect.prebuilt.served_worker import RunningWorker
from recollect.store.server import CONNECTION_KWARGS


def _until(predicate: Callable[[], bool], timeout_s: float = 15) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is gone but for its exit status
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _connected(database_uri: str) -> bool:
    """The worker role holds a connection to the test's database: the worker is serving."""
    with psycopg.connect(database_uri, **CONNECTION_KWARGS) as conn:
        row = conn.execute(
            "SELECT count(*) AS n FROM pg_stat_activity "
            "WHERE datname = current_database() AND usename LIKE '%worker'"
        ).fetchone()
    return bool(row and row["n"])


def test_the_worker_is_a_process_of_its_own_and_stops_with_the_server(database_uri: str) -> None:
    running = RunningWorker(database_uri)
    assert running.process.pid != os.getpid()
    assert _until(lambda: _connected(database_uri)), "the worker never connected"
    started = time.monotonic()
    running.close()
    assert running.process.returncode == 0, "the worker was killed, not stopped"
    assert time.monotonic() - started < served_worker.STOP_WAIT_S


def test_a_worker_that_exits_is_started_again(
    database_uri: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(served_worker, "RESTART_AFTER_S", 0.2)
    running = RunningWorker(database_uri)
    try:
        first = running.process.pid
        os.kill(first, signal.SIGKILL)
        assert _until(lambda: running.process.pid != first and _alive(running.process.pid))
    finally:
        running.close()


SERVER = """
import sys, time
from recollect.prebuilt.served_worker import RunningWorker
from recollect.store.server import CONNECTION_KWARGS
running = RunningWorker(sys.stdin.readline().strip())
print(running.process.pid, flush=True)
time.sleep(120)
"""


def test_a_killed_servers_worker_stops(database_uri: str) -> None:
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert server.stdin is not None
    assert server.stdout is not None
    server.stdin.write(database_uri + "\n")
    server.stdin.close()
    worker = int(server.stdout.readline())
    try:
        assert _alive(worker)
        server.kill()
        server.wait()
        assert _until(lambda: not _alive(worker)), "the worker outlived its server"
    finally:
        if _alive(worker):
            os.kill(worker, signal.SIGKILL)
