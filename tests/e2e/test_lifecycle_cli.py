"""`recollect memory export|show|restore` and `recollect maintenance` as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psycopg
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg_pool import ConnectionPool

from recollect.store.scope import Scope
from tests.support.db import all_rows
from tests.support.processes import run_recollect
from tests.support.tenant_data import populate_user

ANA = Scope.for_user("acme", "ana")
AGED_GOAL = """
UPDATE facts SET category = 'goal', last_reinforced_at = now() - interval '40 days'
WHERE text = 'ana prefers tea'
"""


def test_export_show_maintenance_restore(
    pool: ConnectionPool[Any], checkpointer: PostgresSaver, database_uri: str, tmp_path: Path
) -> None:
    populate_user(pool, checkpointer, ANA)
    env = {"DATABASE_URI": database_uri}

    out = tmp_path / "ana.json"
    exported = run_recollect("memory", "export", "--user", "ana", "--org", "acme",
                             "--out", str(out), env=env)  # fmt: skip
    assert exported.returncode == 0, exported.stderr
    assert "exported ana (4 facts)" in exported.stdout  # three facts and a store item's
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["user_id"] == "ana"
    assert len(document["threads"]) == 2

    missing = run_recollect("memory", "export", "--user", "ana", "--org", "acme",
                            "--out", str(tmp_path / "no" / "x.json"), env=env)  # fmt: skip
    assert missing.returncode != 0
    assert "does not exist" in missing.stderr

    shown = run_recollect("memory", "show", "--user", "ana", "--org", "acme", env=env)
    assert "- ana lives in Lisbon" in shown.stdout

    with psycopg.connect(database_uri, autocommit=True) as conn:
        conn.execute(AGED_GOAL)
    bad = run_recollect("maintenance", env={**env, "RECOLLECT_RETENTION": "goal=soon"})
    assert bad.returncode != 0
    assert "goal must be a number" in bad.stderr
    dry = run_recollect("maintenance", "--dry-run", env=env)
    assert "dry run" in dry.stdout
    assert "goal" in dry.stdout
    assert "expired 1" in dry.stdout
    report = run_recollect("maintenance", "--json", env=env)
    assert json.loads(report.stdout)["categories"]["goal"]["expired"] == 1
    [goal] = all_rows(pool, "SELECT id::text AS id FROM facts WHERE deleted_at IS NOT NULL")

    shown = run_recollect("memory", "show", "--user", "ana", "--org", "acme", env=env)
    assert "prefers tea" not in shown.stdout
    assert "1 deleted fact(s)" in shown.stdout
    restored = run_recollect("memory", "restore", goal["id"], env=env)
    assert restored.returncode == 0, restored.stderr
    assert all_rows(pool, "SELECT id FROM facts WHERE deleted_at IS NOT NULL") == []
    next_year = {**env, "RECOLLECT_CLOCK_OFFSET": "400d"}
    rehearsal = run_recollect("maintenance", "--dry-run", "--json", env=next_year)
    categories = json.loads(rehearsal.stdout)["categories"]
    # biographical: where ana lives and the store item's fact (uncategorised values are)
    assert (categories["biographical"]["expired"], categories["goal"]["expired"]) == (2, 1)
    assert all_rows(pool, "SELECT id FROM facts WHERE deleted_at IS NOT NULL") == []
    again = run_recollect("memory", "restore", goal["id"], env=env)
    assert again.returncode != 0
    assert "is not deleted" in again.stderr
    nonsense = run_recollect("memory", "restore", "42", env=env)
    assert nonsense.returncode != 0
    assert "not a fact id" in nonsense.stderr
