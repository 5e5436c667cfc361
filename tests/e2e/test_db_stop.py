"""`recollect db stop` stops the embedded server it names, or says which processes keep it."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from recollect.cli.embedded_stop import HOLDERS_FILE, server_pid
from tests.support.processes import run_recollect

HOLD_SERVER = """
import sys
from pathlib import Path
from recollect.store.server import embedded_server
embedded_server(Path(sys.argv[1]))
print("holding", flush=True)
sys.stdin.readline()
"""
"""A process that uses the server until its stdin closes, as `recollect chat` does."""


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "data"
    yield folder
    if server_pid(folder / "pgdata") is not None:
        run_recollect("db", "stop", env={"RECOLLECT_DATA_DIR": str(folder)})


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_stop_stops_a_server_whose_holder_list_names_a_dead_process(data_dir: Path) -> None:
    env = {"RECOLLECT_DATA_DIR": str(data_dir)}
    started = run_recollect("db", "start", env=env)
    assert started.returncode == 0, started.stderr
    pgdata = data_dir / "pgdata"
    assert server_pid(pgdata) is not None
    # A `recollect` process killed while it held the server leaves its pid behind.
    (pgdata / HOLDERS_FILE).write_text(json.dumps([_dead_pid()]))

    stopped = run_recollect("db", "stop", env=env)

    assert stopped.returncode == 0, stopped.stderr
    assert "stopped" in stopped.stdout
    assert server_pid(pgdata) is None
    again = run_recollect("db", "stop", env=env)
    assert again.returncode == 0
    assert "is not running" in again.stdout


def test_stop_names_a_live_process_that_holds_the_server_and_leaves_it_running(
    data_dir: Path,
) -> None:
    env = {"RECOLLECT_DATA_DIR": str(data_dir)}
    assert run_recollect("db", "start", env=env).returncode == 0
    pgdata = data_dir / "pgdata"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_SERVER, str(data_dir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None
    assert holder.stdin is not None
    assert holder.stdout.readline().strip() == "holding"

    refused = run_recollect("db", "stop", env=env)

    assert refused.returncode == 1
    assert f"in use by pid {holder.pid}" in refused.stderr
    assert "not stopped" in refused.stderr
    assert server_pid(pgdata) is not None
    holder.stdin.close()
    assert holder.wait(timeout=60) == 0
    stopped = run_recollect("db", "stop", env=env)
    assert stopped.returncode == 0, stopped.stderr
    assert server_pid(pgdata) is None
