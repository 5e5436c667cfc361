"""Exit never loses a turn's trace: a process closing its pool first waits (bounded) for the
trace writer, and says in one line what it could not write.

The database is held up on purpose: a `SHARE` lock on `memory_traces` blocks the writer's
insert, so at exit one trace is in flight and one queued behind it. Closing the pool first
would lose the queued one whenever the lock is released, so each test fails at once if exit
stops waiting.
"""

from __future__ import annotations

import os
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
