"""Ids that are not ids, at the command line: each is refused with one clear line before any
work is done, and nothing is written (no thread is claimed by a half-accepted id)."""

from __future__ import annotations

import psycopg
import pytest

from recollect.store.server import CONNECTION_KWARGS
from tests.support.processes import run_recollect

HOSTILE_IDS = {
    "empty": ("", "empty"),
    "only a zero-width space": ("\u200b", "empty"),
    "the reserved org owner": ("@org", "reserved"),
    "10,000 characters": ("u" * 10_000, "the limit is 128"),
    "150 characters": ("u" * 150, "the limit is 128"),
    "a Cyrillic look-alike": ("g\u0456na", "mixes the cyrillic and latin scripts"),
    "a path": ("../etc/passwd", "may contain only"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_IDS))
def test_a_hostile_user_id_is_one_line_and_claims_nothing(database_uri: str, case: str) -> None:
    user, says = HOSTILE_IDS[case]
    result = run_recollect(
        "chat", "--user", user, env={"DATABASE_URI": database_uri}, stdin="hello\n"
    )
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("recollect: "), lines[0]
    assert says in lines[0], lines[0]
    assert "Traceback" not in result.stderr
    with psycopg.connect(database_uri, **CONNECTION_KWARGS) as conn:
        row = conn.execute("SELECT count(*) AS n FROM threads").fetchone()
    assert row is not None
    assert row["n"] == 0


@pytest.mark.parametrize("by", ["@org", "", "x" * 200, "d\u0430na"])
def test_a_hostile_reviewer_name_is_one_line(database_uri: str, by: str) -> None:
    result = run_recollect(
        "approvals", "approve", "no-such-workflow", "--org", "acme", "--by", by,
        env={"DATABASE_URI": database_uri},
    )  # fmt: skip
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
