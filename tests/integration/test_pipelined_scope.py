"""A pipelined read sends BEGIN, its scope, its statements and COMMIT in one round trip: the
scope holds for its statements only, and an error leaves the connection idle and unscoped."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from psycopg.pq import TransactionStatus
from psycopg_pool import ConnectionPool

from recollect.store.scope import Scope
from recollect.store.tenancy import pipelined_scope

ANA = Scope.for_user("acme", "ana")
SETTING = "SELECT current_setting('app.user_id', true) AS user_id"


def _unscoped(conn: psycopg.Connection[Any]) -> bool:
    row = conn.execute(SETTING).fetchone()
    return conn.info.transaction_status == TransactionStatus.IDLE and not (row or {})["user_id"]


def test_a_pipelined_read_is_scoped_and_leaves_nothing_behind(pool: ConnectionPool[Any]) -> None:
    with pool.connection() as conn:
        with pipelined_scope(conn, ANA):
            inside = conn.execute(SETTING)
            open_transaction = conn.execute("SELECT now() = statement_timestamp() AS fresh")
        assert inside.fetchall() == [{"user_id": "ana"}]
        assert open_transaction.fetchall() == [{"fresh": False}], "one transaction, begun before"
        assert _unscoped(conn)


def test_a_failed_pipelined_read_rolls_back_and_leaves_nothing_behind(
    pool: ConnectionPool[Any],
) -> None:
    with pool.connection() as conn:
        with pytest.raises(psycopg.errors.DivisionByZero):
            _fail_inside(conn)
        assert _unscoped(conn)


def _fail_inside(conn: psycopg.Connection[Any]) -> None:
    with pipelined_scope(conn, ANA):
        conn.execute("SELECT 1 / 0")
        conn.execute(SETTING)
