"""Deleting a fact looks up the facts it replaced by an index, not by reading every tenant's
facts: `superseded_by` references `facts.id` with ON DELETE SET NULL, and Postgres runs that
action once for every fact an erasure or a purge deletes."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg_pool import ConnectionPool

from recollect.longterm.facts import LongTermMemory
from recollect.privacy.forget import forget_user
from recollect.store.scope import Scope
from recollect.store.server import CONNECTION_KWARGS
from tests.support.db import all_rows
from tests.support.moves import move_from_lisbon_to_porto

ANA = Scope.for_user("acme", "ana")
SET_NULL_ON_DELETE = "UPDATE ONLY facts SET superseded_by = NULL WHERE $1 = superseded_by"
"""The statement Postgres's referential action runs for each deleted fact (`ri_triggers.c`)."""


def test_the_referential_action_of_a_delete_reads_an_index(database_uri: str) -> None:
    with psycopg.connect(database_uri, **CONNECTION_KWARGS) as conn, conn.transaction():
        conn.execute("SET LOCAL plan_cache_mode = force_generic_plan")
        conn.execute("SET LOCAL enable_seqscan = off")  # what is left is what can serve it
        conn.execute(f"PREPARE set_null (uuid) AS {SET_NULL_ON_DELETE}")
        plan = "\n".join(
            next(iter(r.values()))
            for r in conn.execute(
                "EXPLAIN EXECUTE set_null('00000000-0000-7000-8000-000000000000')"
            ).fetchall()
        )
        conn.execute("DEALLOCATE set_null")
    assert "facts_successors" in plan, plan
    assert "Seq Scan" not in plan, plan


def test_a_user_whose_facts_replaced_each_other_is_erased(
    pool: ConnectionPool[Any], worker_pool: ConnectionPool[Any]
) -> None:
    move_from_lisbon_to_porto(LongTermMemory(pool), ANA)
    forget_user(worker_pool, ANA)
    assert all_rows(pool, "SELECT count(*) AS n FROM facts")[0]["n"] == 0
