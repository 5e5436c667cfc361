"""A pool that gets no connection says why, as Postgres answers it: the slots are taken, the
login was refused, the server does not answer, or the pool itself stayed full; each line names
its own fix, and a pool whose cause went away serves again without a restart."""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from recollect.store.budget import POOL_SIZE_ENV, BudgetedAsyncPool, BudgetedPool
from recollect.store.errors import DatabaseRefusedError, NoConnectionError, PoolExhaustedError
from recollect.store.roles import app_uri
from recollect.store.server import CONNECTION_KWARGS

WAIT_S = 0.3


def _pool(conninfo: str, max_size: int = 2) -> BudgetedPool:
    pool = BudgetedPool(
        conninfo,
        size_variable=POOL_SIZE_ENV,
        min_size=0,
        max_size=max_size,
        kwargs=dict(CONNECTION_KWARGS),
        name="lines",
        open=False,
        reconnect_timeout=1.0,
    )
    pool.open(wait=False)
    return pool


def _line(pool: BudgetedPool) -> NoConnectionError:
    try:
        with pytest.raises(NoConnectionError) as caught:
            pool.getconn(timeout=WAIT_S)
    finally:
        pool.close()
    return caught.value


def _with(conninfo: str, **changes: Any) -> str:
    return make_conninfo("", **{**conninfo_to_dict(conninfo), **changes})


def test_taken_slots_are_named_and_the_pool_serves_again_once_they_are_free(
    database_uri: str,
) -> None:
    with psycopg.connect(database_uri, autocommit=True) as admin:
        admin.execute("CREATE ROLE crowded LOGIN PASSWORD 'crowded-pw' CONNECTION LIMIT 1")
        admin.execute("GRANT recollect_app TO crowded")
    uri = _with(database_uri, user="crowded", password="crowded-pw")
    pool = _pool(uri)
    try:
        # another client holds the role's one slot
        with psycopg.connect(uri), pytest.raises(DatabaseRefusedError) as caught:
            pool.getconn(timeout=WAIT_S)
        line = str(caught.value)
        assert "has no connection slot for pool 'lines'" in line
        assert "too many connections" in line
        assert "max_connections" in line
        assert POOL_SIZE_ENV not in line
        pool.putconn(pool.getconn(timeout=5))  # the slot is free: served, no restart
    finally:
        pool.close()


def test_a_refused_login_is_named_with_what_fixes_it(database_uri: str) -> None:
    """(A refused password, on a cluster that asks for one: `test_owned_postgres`.)"""
    error = _line(_pool(_with(database_uri, user="nobody-here")))
    assert isinstance(error, DatabaseRefusedError)
    assert "refused the login of pool 'lines'" in str(error)
    assert 'role "nobody-here" does not exist' in str(error)
    assert "check the user 'nobody-here'" in str(error)


def test_a_server_that_does_not_answer_is_named_as_down(database_uri: str) -> None:
    error = _line(_pool(_with(database_uri, host="127.0.0.1", port="9")))
    assert isinstance(error, DatabaseRefusedError)
    assert str(error).startswith("Postgres at 127.0.0.1:9 does not answer pool 'lines'")
    assert "recollect db start" in str(error)


def test_only_a_pool_that_stayed_full_names_its_size(database_uri: str) -> None:
    pool = _pool(app_uri(database_uri), max_size=1)
    held = pool.getconn(timeout=5)
    try:
        with pytest.raises(PoolExhaustedError) as caught:
            pool.getconn(timeout=WAIT_S)
    finally:
        pool.putconn(held)
        pool.close()
    assert f"raise {POOL_SIZE_ENV} (now 1)" in str(caught.value)


def test_the_async_pool_names_the_cause_too(database_uri: str) -> None:
    async def scenario() -> NoConnectionError:
        pool = BudgetedAsyncPool(
            _with(database_uri, user="nobody-here"),
            size_variable=POOL_SIZE_ENV,
            min_size=0,
            max_size=2,
            kwargs=dict(CONNECTION_KWARGS),
            name="lines-async",
            open=False,
            reconnect_timeout=1.0,
        )
        await pool.open(wait=False)
        try:
            await pool.getconn(timeout=WAIT_S)
        except NoConnectionError as exc:
            return exc
        finally:
            await pool.close()
        raise AssertionError("a connection was handed out")

    error = asyncio.run(scenario())
    assert isinstance(error, DatabaseRefusedError)
    assert isinstance(error, TimeoutError), "the LangGraph server shows a TimeoutError's line"
    assert "refused the login of pool 'lines-async'" in str(error)
