"""Refund workflows across processes: requested in one, approved days later in another, and
finished after a `kill -9` in the middle of execution."""

from __future__ import annotations

import json
import subprocess
import time
from datetime import datetime, timedelta
from typing import Any

from psycopg_pool import ConnectionPool

from graphs.approvals import Approvals
from recollect.store.scope import REVIEWER, Scope
from recollect.store.tenancy import scoped
from tests.support.processes import Interactive, run_recollect

HISTORY = ["draft", "submitted_for_review", "approved", "executing", "completed"]


def _ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout


def _request(env: dict[str, str], order: str = "8842-B") -> str:
    out = _ok(
        run_recollect(
            "approvals", "request", "--user", "dana", "--org", "acme", "--order", order,
            "--amount", "249.00", "--reason", "charged twice", env=env,
        )
    )  # fmt: skip
    return out.strip()


def _show(env: dict[str, str], workflow_id: str) -> dict[str, Any]:
    out = _ok(run_recollect("approvals", "show", workflow_id, "--org", "acme", "--json", env=env))
    shown: dict[str, Any] = json.loads(out)
    return shown


def _refunds(pool: ConnectionPool[Any], workflow_id: str) -> int:
    with scoped(pool, Scope.for_user("acme", "auditor", frozenset({REVIEWER}))) as conn:
        row = conn.execute(
            "SELECT count(*) AS n FROM refunds WHERE workflow_id = %s", (workflow_id,)
        ).fetchone()
    assert row is not None
    return int(row["n"])


def test_requested_in_one_process_approved_three_days_later_in_another(
    database_uri: str, pool: ConnectionPool[Any]
) -> None:
    env = {"DATABASE_URI": database_uri}
    workflow_id = _request(env)
    pending = _show(env, workflow_id)
    assert pending["state"] == "submitted_for_review"
    assert pending["awaiting_review"] is True
    assert pending["refunds"] == []

    later = {**env, "RECOLLECT_CLOCK_OFFSET": "3d"}
    approved = run_recollect(
        "approvals", "approve", workflow_id, "--org", "acme", "--by", "maria",
        "--note", "duplicate charge confirmed", env=later,
    )  # fmt: skip
    assert "completed" in _ok(approved).splitlines()[0]

    done = _show(env, workflow_id)
    assert done["state"] == "completed"
    record = done["workflow"]
    assert record["decided_by"] == "maria"
    assert record["decision_note"] == "duplicate charge confirmed"
    waited = datetime.fromisoformat(record["decided_at"]) - datetime.fromisoformat(
        record["created_at"]
    )
    assert timedelta(days=3) <= waited < timedelta(days=3, minutes=10)
    assert [a["transition"] for a in done["audit"]] == [
        "create", "submit", "approve", "execute", "complete",
    ]  # fmt: skip
    assert [a["to_state"] for a in done["audit"]] == HISTORY
    assert len(done["refunds"]) == 1
    assert done["refunds"][0]["amount"] == "249.00"
    assert Approvals(pool).history(workflow_id, org_id="acme") == HISTORY


def test_kill_9_while_executing_then_resume_finishes_with_exactly_one_refund(
    database_uri: str, pool: ConnectionPool[Any]
) -> None:
    env = {"DATABASE_URI": database_uri}
    workflow_id = _request(env)
    approver = Interactive(
        "approvals", "approve", workflow_id, "--org", "acme", "--by", "maria",
        env={**env, "RECOLLECT_EXECUTE_PAUSE_S": "120"},
    )  # fmt: skip
    approvals = Approvals(pool)
    deadline = time.monotonic() + 90
    while _refunds(pool, workflow_id) == 0:
        assert approver.process.poll() is None, "the approving process ended early"
        assert time.monotonic() < deadline, "execution never reached the refund"
        time.sleep(0.1)
    assert approvals.history(workflow_id, org_id="acme")[-1] == "executing"
    approver.kill()  # SIGKILL: the refund is committed, the checkpoint still says executing

    crashed = _show(env, workflow_id)
    assert crashed["state"] == "executing"
    assert crashed["next_steps"] == ["execute"]
    assert len(crashed["refunds"]) == 1

    resumed = _ok(run_recollect("approvals", "resume", "--org", "acme", env=env))
    assert workflow_id in resumed
    finished = _show(env, workflow_id)
    assert finished["state"] == "completed"
    assert "applied before this retry" in finished["audit"][-1]["note"]
    assert _refunds(pool, workflow_id) == 1
    assert approvals.history(workflow_id, org_id="acme") == HISTORY
    assert _ok(run_recollect("approvals", "resume", "--org", "acme", env=env)).strip() == (
        "nothing to resume in org 'acme'"
    )


def test_refusals_are_one_clear_line_and_change_nothing(database_uri: str) -> None:
    env = {"DATABASE_URI": database_uri}
    workflow_id = _request(env)
    cases = [
        (("approve", workflow_id, "--org", "globex", "--by", "mallory"), "no approval workflow"),
        (("approve", workflow_id, "--org", "acme", "--by", "dana"), "asked for this refund"),
        (("reject", workflow_id, "--org", "acme", "--by", "maria", "--reason", " "), "reason"),
        (
            ("request", "--user", "dana", "--order", "1", "--amount", "-5", "--reason", "x"),
            "amount: Input should be greater than 0",
        ),
    ]
    for args, message in cases:
        result = run_recollect("approvals", *args, env=env)
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        errors = [line for line in result.stderr.splitlines() if line.startswith("recollect:")]
        assert len(errors) == 1, result.stderr
        assert message in errors[0]
        assert "Traceback" not in result.stderr
    assert _show(env, workflow_id)["state"] == "submitted_for_review"
    listed = _ok(run_recollect("approvals", "list", "--org", "acme", "--json", env=env))
    assert [w["id"] for w in json.loads(listed)] == [workflow_id]


def test_the_requester_cannot_approve_under_another_spelling_on_the_command_line(
    database_uri: str, pool: ConnectionPool[Any]
) -> None:
    env = {"DATABASE_URI": database_uri}
    workflow_id = _request(env)
    for by, refusal in (
        ("DANA", "'dana' asked for this refund and cannot decide it"),
        ("d\u0430na", "mixes the cyrillic and latin scripts"),
    ):
        result = run_recollect(
            "approvals", "approve", workflow_id, "--org", "acme", "--by", by, env=env
        )
        assert result.returncode != 0
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1
        assert refusal in lines[0]
    assert _show(env, workflow_id)["awaiting_review"] is True
    assert _refunds(pool, workflow_id) == 0
    mine = _ok(run_recollect("approvals", "list", "--org", "acme", "--as", "erin", env=env))
    assert mine.strip().startswith("no approval workflows")
