"""The pools keep to the budget: a full pool says which setting to raise, idle connections are
given back, and the served API's checkpointer lends its async pool to the async steps."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from psycopg_pool import ConnectionPool, PoolTimeout

from recollect.store.apool import (
    adopt_async_pool,
    close_async_pools,
    open_async_pool,
    shared_async_pool,
)
from recollect.store.budget import POOL_MAX_IDLE_S
from recollect.store.errors import PoolExhaustedError
from recollect.store.roles import app_uri
from recollect.store.server import open_pool


def test_a_full_pool_fails_with_one_line_naming_the_setting(database_uri: str) -> None:
    pool = open_pool(app_uri(database_uri), max_size=1, name="budget")
    try:
        with pool.connection(), pytest.raises(PoolTimeout) as exhausted:
            pool.getconn(timeout=0.2)
    finally:
        pool.close()
    assert isinstance(exhausted.value, PoolExhaustedError)
    assert str(exhausted.value) == (
        "all 1 connections of pool 'budget' stayed in use for 0.2 s: raise RECOLLECT_POOL_SIZE "
        "(now 1), and Postgres max_connections with it, or put a transaction pooler (PgBouncer) "
        "in front"
    )


def test_the_async_twin_names_its_own_setting(database_uri: str) -> None:
    async def scenario() -> str:
        pool = open_async_pool(app_uri(database_uri), name="budget-async")
        await pool.open()
        try:
            held = [await pool.getconn() for _ in range(pool.max_size)]
            try:
                await pool.getconn(timeout=0.2)
            except PoolExhaustedError as exc:
                return str(exc)
            finally:
                for conn in held:
                    await pool.putconn(conn)
        finally:
            await pool.close()
        return "no error"

    assert asyncio.run(scenario()).startswith(
        "all 8 connections of pool 'budget-async' stayed in use for 0.2 s: raise "
        "RECOLLECT_ASYNC_POOL_SIZE (now 8)"
    )


def test_pools_give_back_idle_connections_down_to_one(database_uri: str) -> None:
    """How fast they shrink is measured by `bench.load` (`--settle`), not timed here."""
    sync = open_pool(app_uri(database_uri), name="budget")
    sync.close()
    asynchronous = open_async_pool(app_uri(database_uri))
    assert [(p.min_size, p.max_size, p.max_idle) for p in (sync, asynchronous)] == [
        (1, 4, POOL_MAX_IDLE_S),
        (1, 8, POOL_MAX_IDLE_S),
    ]


def test_the_checkpointers_pool_is_the_async_steps_pool_while_lent(
    pool: ConnectionPool[Any],
) -> None:
    async def scenario() -> tuple[bool, bool]:
        conninfo = pool.conninfo
        assert isinstance(conninfo, str)
        lent = open_async_pool(conninfo, name="recollect-checkpoints")
        await lent.open()
        try:
            async with adopt_async_pool(lent):
                shared = await shared_async_pool(pool) is lent
            own = await shared_async_pool(pool) is not lent
            await close_async_pools()
            return shared, own
        finally:
            await lent.close()

    assert asyncio.run(scenario()) == (True, True)
