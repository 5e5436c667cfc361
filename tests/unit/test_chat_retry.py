"""`recollect chat` tells a full pool apart from a lost connection when it retries a turn."""

from __future__ import annotations

import psycopg
from psycopg_pool import PoolTimeout

from recollect.cli.chat_retry import gave_up_message, retry_notice
from recollect.store.budget import exhausted


def test_a_full_pool_is_called_full_and_names_both_pool_settings() -> None:
    full = exhausted("recollect", 4, "RECOLLECT_POOL_SIZE", 30.0)

    line = retry_notice(full, 2.0)

    assert "pool is full" in line
    assert "connection lost" not in line
    assert "RECOLLECT_POOL_SIZE" in line
    assert "RECOLLECT_ASYNC_POOL_SIZE" in line
    assert "retrying in 2s" in line
    assert "stayed full" in gave_up_message(full)
    assert "unavailable" not in gave_up_message(full)


def test_a_lost_connection_is_still_called_lost() -> None:
    lost = psycopg.OperationalError("server closed the connection unexpectedly\nmore detail")

    line = retry_notice(lost, 4.0)

    assert line == (
        "recollect: database connection lost (server closed the connection unexpectedly); "
        "retrying in 4s"
    )
    assert "pool is full" not in retry_notice(PoolTimeout(""), 1.0)
    assert "PoolTimeout" in retry_notice(PoolTimeout(""), 1.0)
    assert "unavailable" in gave_up_message(lost)
