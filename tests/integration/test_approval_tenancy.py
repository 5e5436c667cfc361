"""Row-level security on the approval tables, exercised as a role that owns nothing.

Reviewers read their organisation's workflows, requesters their own; only the owner's scope
writes them; another organisation sees nothing. The whole workflow runs through such a role
here, as the app will.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg_pool import ConnectionPool

from graphs.approvals import Approvals
from recollect.approvals.machine import WorkflowState
from recollect.store.pool import use_pool
from recollect.store.schema.approval_authority import limit_app_role
from recollect.store.scope import REVIEWER, Scope
from recollect.store.server import open_pool
from recollect.store.tenancy import scoped

PROBE_ROLE = "recollect_approval_probe"
TABLES = ("approval_workflows", "approval_audit", "refunds")


@pytest.fixture
def probe_pool(database_uri: str) -> Iterator[ConnectionPool[Any]]:
    with psycopg.connect(database_uri, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (PROBE_ROLE,)).fetchone():
            conn.execute(f"CREATE ROLE {PROBE_ROLE} LOGIN NOSUPERUSER NOBYPASSRLS")
        database = conninfo_to_dict(database_uri)["dbname"]
        conn.execute(f'GRANT CONNECT ON DATABASE "{database}" TO {PROBE_ROLE}')
        conn.execute(f"GRANT USAGE ON SCHEMA public TO {PROBE_ROLE}")
        conn.execute(
            f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {PROBE_ROLE}"
        )
        conn.execute(f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {PROBE_ROLE}")
        conn.execute(f"GRANT EXECUTE ON FUNCTION recollect_thread_visible(text) TO {PROBE_ROLE}")
        limit_app_role(conn, PROBE_ROLE)
    params = conninfo_to_dict(database_uri)
    params.pop("password", None)
    params["user"] = PROBE_ROLE
    pool = open_pool(make_conninfo("", **params), max_size=4, name="probe")
    yield pool
    pool.close()
    with psycopg.connect(database_uri, autocommit=True) as conn:
        conn.execute(f"DROP OWNED BY {PROBE_ROLE}")


def _counts(pool: ConnectionPool[Any], scope: Scope) -> dict[str, int]:
    with scoped(pool, scope) as conn:
        return {
            table: conn.execute(f"SELECT count(*) AS n FROM {table}").fetchone()["n"]
            for table in TABLES
        }


def test_the_workflow_runs_under_row_level_security_and_stays_in_its_org(
    probe_pool: ConnectionPool[Any],
) -> None:
    approvals = Approvals(probe_pool)
    with use_pool(probe_pool):
        view = approvals.request(
            org_id="acme", user_id="dana", order_id="8842-B", amount="249", reason="twice"
        )
        done = approvals.approve(view.id, org_id="acme", by="maria")
    assert done.state is WorkflowState.COMPLETED
    assert len(done.refunds) == 1

    assert _counts(probe_pool, Scope.for_user("acme", "maria", frozenset({REVIEWER}))) == {
        "approval_workflows": 1,
        "approval_audit": 5,
        "refunds": 1,
    }
    assert _counts(probe_pool, Scope.for_user("globex", "mallory")) == dict.fromkeys(TABLES, 0)
    with probe_pool.connection() as conn:  # no scope at all: nothing is visible
        row = conn.execute("SELECT count(*) AS n FROM approval_workflows").fetchone()
    assert row is not None
    assert row["n"] == 0


def test_only_the_owner_scope_writes_a_workflow(probe_pool: ConnectionPool[Any]) -> None:
    with use_pool(probe_pool):
        view = Approvals(probe_pool).request(
            org_id="acme", user_id="dana", order_id="1", amount="5", reason="late"
        )
    with scoped(probe_pool, Scope.for_user("acme", "maria")) as conn:
        changed = conn.execute(
            "UPDATE approval_workflows SET state = 'failed' WHERE id = %s", (view.id,)
        ).rowcount
    assert changed == 0
    with (
        pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"),
        scoped(probe_pool, Scope.for_user("acme", "maria")) as conn,
    ):
        conn.execute(
            "INSERT INTO refunds (workflow_id, org_id, user_id, order_id, amount, currency, "
            "reason, approved_by, executed_at) "
            "VALUES (%s, 'acme', 'dana', '1', 5, 'USD', 'x', 'maria', now())",
            (view.id,),
        )
    assert Approvals(probe_pool).show(view.id, org_id="acme").state is (
        WorkflowState.SUBMITTED_FOR_REVIEW
    )
