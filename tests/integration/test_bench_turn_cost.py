"""`bench.turn_cost` on the test database: a plain served turn's counts, as the benchmark notes
report them."""

from __future__ import annotations

import asyncio

from psycopg_pool import ConnectionPool

from bench.turn_cost import measure


def test_a_plain_served_turn_costs_what_the_notes_say(
    database_uri: str, pool: ConnectionPool[object]
) -> None:
    systems = asyncio.run(measure(database_uri, users=2, turns=1))
    counted = ("node runs", "checkpoints", "write batches", "transactions", "round trips")
    assert [systems["recollect"][k] for k in counted] == [3, 4, 4, 11, 14]
    assert [systems["stock"][k] for k in counted] == [1, 3, 2, 6, 8]
    assert systems["recollect"]["cpu_ms_per_turn"] > 0
