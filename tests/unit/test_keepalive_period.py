"""A held transaction is touched well inside the server's idle limit, and at least every 20 s."""

from __future__ import annotations

from recollect.store.keepalive import MAX_PERIOD_S, keepalive_period


def test_the_period_is_a_third_of_the_servers_limit_and_never_long() -> None:
    assert keepalive_period(1000) == 1000 / 3000
    assert keepalive_period(30_000) == 10.0
    assert keepalive_period(0) == MAX_PERIOD_S
    assert keepalive_period(3_600_000) == MAX_PERIOD_S
