"""The test run never reads or writes the project's own `.recollect/`.

The whole-run proof is the session fixture `project_data_untouched` (conftest): it fingerprints
`.recollect/` before the first test and fails the run if a byte changed (or the folder
appeared), or a row while a server runs there, and it records any process started with an
environment that points there. These tests show its parts work, and that the run's processes
inherit their own data folder.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psycopg

from recollect.store.server import data_dir, embedded_server
from tests.support import data_guard


def test_the_run_and_its_children_use_a_data_folder_of_their_own() -> None:
    own = Path(os.environ["RECOLLECT_DATA_DIR"])
    assert data_guard.PROJECT_ROOT not in own.parents
    assert data_dir() == own.resolve()
    child = subprocess.run(
        [sys.executable, "-c", "from recollect.store.server import data_dir; print(data_dir())"],
        capture_output=True,
        text=True,
        cwd=data_guard.PROJECT_ROOT,
        check=True,
    )
    assert child.stdout.strip() == str(own.resolve())
    assert not data_guard.points_at_project(os.environ, data_guard.PROJECT_ROOT)


def test_a_process_pointed_at_the_project_is_caught(project_data_seen: list[str]) -> None:
    before = len(project_data_seen)
    bare = {k: v for k, v in os.environ.items() if k != "RECOLLECT_DATA_DIR"}
    subprocess.run(
        [sys.executable, "-c", "pass"], env=bare, cwd=data_guard.PROJECT_ROOT, check=True
    )
    assert len(project_data_seen) == before + 1
    del project_data_seen[before:]  # caught on purpose: the run's own check must stay green
    given = {**bare, "DATABASE_URI": "postgresql://localhost/elsewhere"}
    subprocess.run(
        [sys.executable, "-c", "pass"], env=given, cwd=data_guard.PROJECT_ROOT, check=True
    )
    assert len(project_data_seen) == before


def test_a_fingerprint_sees_one_changed_byte_and_a_new_or_vanished_folder(
    tmp_path: Path,
) -> None:
    folder = tmp_path / ".recollect"
    assert data_guard.fingerprint(folder) is None
    (folder / "pgdata").mkdir(parents=True)
    (folder / "pgdata" / "PG_VERSION").write_bytes(b"18\n")
    before = data_guard.fingerprint(folder)
    assert data_guard.differences(before, data_guard.fingerprint(folder)) == []
    (folder / "pgdata" / "PG_VERSION").write_bytes(b"17\n")
    assert data_guard.differences(before, data_guard.fingerprint(folder)) == [
        "changed pgdata/PG_VERSION"
    ]
    assert data_guard.differences(None, before) == ["folder created"]
    assert data_guard.differences(before, None) == ["folder deleted"]


def test_a_running_server_is_judged_by_its_rows_not_by_the_files_it_rewrites(
    tmp_path: Path,
) -> None:
    folder = tmp_path / ".recollect"
    server = embedded_server(folder, keep_running=False)
    try:
        uri = server.get_uri()
        with psycopg.connect(uri, autocommit=True) as conn:
            conn.execute("CREATE TABLE notes (body text)")
            before = data_guard.fingerprint(folder)
            control = (folder / "pgdata" / "global" / "pg_control").read_bytes()
            conn.execute("CHECKPOINT")  # the server's own writing, as an idle one does
            assert (folder / "pgdata" / "global" / "pg_control").read_bytes() != control
            assert data_guard.differences(before, data_guard.fingerprint(folder)) == []
            assert before is not None
            assert before[data_guard.SERVER] == "running"
            conn.execute("INSERT INTO notes VALUES ('written during the run')")
            assert data_guard.differences(before, data_guard.fingerprint(folder)) == [
                "changed rows of postgres.public.notes"
            ]
    finally:
        server.cleanup()
    assert data_guard.differences(before, data_guard.fingerprint(folder))[0] == (
        "changed server on pgdata"
    )
