"""Thread ownership, enforced by row-level security as the app role."""

from __future__ import annotations

from typing import Any

import pytest
from psycopg_pool import ConnectionPool

from recollect.store.errors import ThreadAccessError
from recollect.store.scope import Scope
from recollect.store.threads import claim_thread, list_threads

ANA = Scope.for_user("acme", "ana")
BO = Scope.for_user("acme", "bo")


def test_owner_can_resume_and_others_are_refused(pool: ConnectionPool[Any]) -> None:
    first = claim_thread(pool, ANA, "t-1")
    again = claim_thread(pool, ANA, "t-1")
    assert first.created_at == again.created_at
    assert again.last_active_at >= first.last_active_at
    with pytest.raises(ThreadAccessError, match="t-1"):
        claim_thread(pool, BO, "t-1")
    with pytest.raises(ThreadAccessError):
        claim_thread(pool, Scope.for_user("other-org", "ana"), "t-1")
    assert [t.thread_id for t in list_threads(pool, ANA)] == ["t-1"]
    assert list_threads(pool, BO) == []


def test_app_role_without_scope_sees_no_rows(pool: ConnectionPool[Any]) -> None:
    claim_thread(pool, ANA, "t-2")
    with pool.connection() as conn:
        who = conn.execute("SELECT current_user AS u").fetchone()
        rows = conn.execute("SELECT * FROM threads").fetchall()
    assert who is not None
    assert who["u"] == "recollect_app"
    assert rows == []


def test_app_role_cannot_write_rows_for_another_tenant(pool: ConnectionPool[Any]) -> None:
    import psycopg

    from recollect.store.tenancy import scoped

    with pytest.raises(psycopg.errors.InsufficientPrivilege), scoped(pool, ANA) as conn:
        conn.execute(
            "INSERT INTO threads (thread_id, org_id, user_id) VALUES ('t-x', 'acme', 'bo')"
        )
