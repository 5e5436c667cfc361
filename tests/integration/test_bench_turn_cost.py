"""`bench.turn_cost` on the test database: a plain served turn's counts, as the benchmark notes
report them."""

from __future__ import annotations

import asyncio

from psycopg_pool import ConnectionPool

from bench.turn_cost import PRUNING, measure


def test_a_plain_served_turn_costs_what_the_notes_say(
    database_uri: str, pool: ConnectionPool[object]
) -> None:
    systems = asyncio.run(measure(database_uri, users=2, turns=1))
    counted = ("node runs", "checkpoints", "write batches", "transactions", "round trips")
    assert [systems["recollect"][k] for k in counted] == [4, 5, 5, 13, 16]
    assert [systems["stock"][k] for k in counted] == [1, 3, 2, 6, 8]
    # Deleting the oldest turn rides on the input checkpoint's trip: no round trip of its own.
    assert systems["recollect"][PRUNING] == systems["recollect"]["round trips"]
    assert systems["stock"][PRUNING] == systems["stock"]["round trips"]
    assert systems["recollect"]["cpu_ms_per_turn"] > 0
