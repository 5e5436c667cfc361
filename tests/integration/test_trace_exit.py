"""Exit never loses a turn's trace: a process closing its pool first waits (bounded) for the
trace writer, and says in one line what it could not write.

The database is held up on purpose: a `SHARE` lock on `memory_traces` blocks the writer's
insert, so at exit one trace is in flight and one queued behind it. Closing the pool first
would lose the queued one whenever the lock is released, so each test fails at once if exit
stops waiting.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

import psycopg
import pytest

from recollect.history.persistence import open_persistence
from recollect.store.scope import Scope
from recollect.trace.store import PendingTrace
from recollect.trace.writer import WRITER

SCOPE = Scope.for_user("org-exit", "u-exit")
WAIT_S = 60.0
BLOCKED_INSERTS = """
SELECT count(*) FROM pg_stat_activity
WHERE datname = current_database() AND wait_event_type = 'Lock'
  AND query LIKE '%%INSERT INTO memory_traces%%'
"""
RELEASE_AFTER_S = 1.0
"""How long the lock outlives the start of the exit: a process that closed its pool without
waiting has done so by then, and one that waits holds on well past it."""
SERVED_PROCESS = """
import sys
from recollect.store.pool import shared_pool
from recollect.store.scope import Scope
from recollect.trace.store import PendingTrace
from recollect.trace.writer import WRITER

scope = Scope.for_user("org-exit", "u-exit")
WRITER.submit(shared_pool(), PendingTrace(scope, "served", {"n": 1}))
print("first", flush=True)
sys.stdin.readline()  # the test has seen the first insert wait on its lock
WRITER.submit(shared_pool(), PendingTrace(scope, "served", {"n": 2}))
"""


GONE_DATABASE_PROCESS = """
import sys
from recollect.store.budget import POOL_SIZE_ENV, BudgetedPool
from recollect.store.pool import run_before_closing
from recollect.store.scope import Scope
from recollect.trace.store import PendingTrace
from recollect.trace.writer import WRITER

pool = BudgetedPool(sys.argv[1], size_variable=POOL_SIZE_ENV, min_size=0, max_size=1,
                    timeout=POOL_TIMEOUT_S, open=False)
pool.open(wait=False)
scope = Scope.for_user("org-exit", "u-exit")
for n in range(3):
    WRITER.submit(pool, PendingTrace(scope, "gone", {"n": n}))
print("queued", flush=True)
run_before_closing()
pool.close()
"""
"""A process whose database is gone (nothing listens at its address) exits with traces queued,
closing its pool as `open_persistence` does."""
POOL_TIMEOUT_S = 30.0


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def _item(thread: str, n: int) -> PendingTrace:
    return PendingTrace(SCOPE, thread, {"n": n})


@contextmanager
def _traces_locked(database_uri: str) -> Iterator[psycopg.Connection[Any]]:
    """Inserts into `memory_traces` wait until the yielded connection commits."""
    with psycopg.connect(database_uri) as conn:
        conn.execute("LOCK TABLE memory_traces IN SHARE MODE")
        try:
            yield conn
        finally:
            conn.rollback()


def _wait_for_blocked_insert(database_uri: str) -> None:
    deadline = time.monotonic() + WAIT_S
    with psycopg.connect(database_uri, autocommit=True) as conn:
        while (row := conn.execute(BLOCKED_INSERTS).fetchone()) is None or row[0] == 0:
            assert time.monotonic() < deadline, "the writer's insert never reached the lock"
            time.sleep(0.05)


def _rows(database_uri: str, thread: str) -> list[int]:
    with psycopg.connect(database_uri, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT (trace->>'n')::int FROM memory_traces WHERE thread_id = %s ORDER BY 1",
            (thread,),
        ).fetchall()
    return [r[0] for r in rows]


def test_closing_the_process_pool_waits_for_queued_traces(database_uri: str) -> None:
    assert WRITER.flush()
    with _traces_locked(database_uri) as lock:
        with open_persistence(database_uri, announce=False) as persistence:
            WRITER.submit(persistence.pool, _item("cli", 1))
            _wait_for_blocked_insert(database_uri)
            WRITER.submit(persistence.pool, _item("cli", 2))
            release = threading.Timer(RELEASE_AFTER_S, lock.rollback)
            release.start()
        release.join()
    assert WRITER.flush()
    assert _rows(database_uri, "cli") == [1, 2]


def test_a_served_process_writes_its_traces_before_its_pool_closes_at_exit(
    database_uri: str,
) -> None:
    env = {**os.environ, "DATABASE_URI": database_uri}
    with _traces_locked(database_uri) as lock:
        child = subprocess.Popen(
            [sys.executable, "-c", SERVED_PROCESS],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert child.stdout is not None
        assert child.stdin is not None
        assert child.stdout.readline().strip() == "first"
        _wait_for_blocked_insert(database_uri)
        child.stdin.write("go\n")
        child.stdin.close()
        with suppress(subprocess.TimeoutExpired):  # gone already: it did not wait for the lock
            child.wait(timeout=RELEASE_AFTER_S)
        lock.rollback()
        child.wait(timeout=WAIT_S)
    assert child.stderr is not None
    assert child.returncode == 0, child.stderr.read()
    assert _rows(database_uri, "served") == [1, 2]


def test_a_trace_that_cannot_be_written_in_time_is_said_in_one_line(
    database_uri: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert WRITER.flush()
    with (
        _traces_locked(database_uri) as lock,
        open_persistence(database_uri, announce=False) as persistence,
    ):
        WRITER.submit(persistence.pool, _item("late", 1))
        _wait_for_blocked_insert(database_uri)
        capsys.readouterr()
        assert not WRITER.flush_before_closing(timeout_s=0.2)
        lines = capsys.readouterr().err.strip().splitlines()
        assert len(lines) == 1, lines
        assert lines[0].startswith("recollect: 1 turn trace(s) not written within 0.2s of exit")
        lock.rollback()
        assert WRITER.flush()
    assert _rows(database_uri, "late") == [1]


def test_exit_with_the_database_gone_waits_only_the_trace_deadline() -> None:
    uri = f"postgresql://recollect@127.0.0.1:{_closed_port()}/recollect?connect_timeout=2"
    script = GONE_DATABASE_PROCESS.replace("POOL_TIMEOUT_S", repr(POOL_TIMEOUT_S))
    env = {**os.environ, "RECOLLECT_TRACE_EXIT_TIMEOUT_S": "0.3"}
    child = subprocess.Popen(
        [sys.executable, "-c", script, uri],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "queued"
    # The pool would give up on a connection only after POOL_TIMEOUT_S; the process must be gone
    # well before that, having waited for its traces no longer than the configured deadline.
    try:
        _, stderr = child.communicate(timeout=POOL_TIMEOUT_S * 2 / 3)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        pytest.fail("exit waited on the pool instead of the trace deadline")
    assert child.returncode == 0, stderr
    ours = [line for line in stderr.splitlines() if line.startswith("recollect:")]
    assert ours == [
        "recollect: 3 turn trace(s) not written within 0.3s of exit and dropped "
        "(the conversation itself is saved)"
    ], stderr
    assert "stayed in use" not in stderr  # no batch sat out the pool's own wait
    assert "turn traces not written" not in stderr  # the lost ones are counted once
