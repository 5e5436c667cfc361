"""A user with data in every store is forgotten to zero rows; the next user loses nothing."""

from __future__ import annotations

import random
from typing import Any

from langgraph.checkpoint.postgres import PostgresSaver
from psycopg_pool import ConnectionPool

from recollect.longterm.facts import LongTermMemory
from recollect.privacy.forget import CHECKPOINT_TABLES, USER_TABLES, forget_user
from recollect.store.schema.fact_words import WORDED_FROM
from recollect.store.scope import Scope
from tests.support.code_centres import record_centre
from tests.support.db import all_rows
from tests.support.tenant_data import populate_user
from tests.support.word_facts import ingest_word_facts

ANA = Scope.for_user("acme", "ana")
BO = Scope.for_user("acme", "bo")
CAROL = Scope.for_user("globex", "ana")  # same user id, another organisation


def _counts(pool: ConnectionPool[Any], scope: Scope, threads: list[str]) -> dict[str, int]:
    counts = {
        table: all_rows(pool, f'SELECT count(*) AS n FROM "{table}" WHERE org_id = %s AND '
                        "user_id = %s", scope.org_id, scope.user_id)[0]["n"]
        for table in USER_TABLES
    }  # fmt: skip
    for table in CHECKPOINT_TABLES:
        counts[table] = all_rows(
            pool, f'SELECT count(*) AS n FROM "{table}" WHERE thread_id = ANY(%s)', threads
        )[0]["n"]
    return counts


def test_forget_empties_every_store_and_touches_no_one_else(
    pool: ConnectionPool[Any], worker_pool: ConnectionPool[Any], checkpointer: PostgresSaver
) -> None:
    ana = populate_user(pool, checkpointer, ANA)
    others = {scope: populate_user(pool, checkpointer, scope) for scope in (BO, CAROL)}
    for scope in (ANA, BO):  # enough facts to have their words listed, and a code centre
        ingest_word_facts(LongTermMemory(pool), scope, WORDED_FROM, random.Random(3), 8)
        record_centre(pool, scope, [0.5] * 8)
    ana_threads = [ana["thread"], ana["approval_thread"]]
    before = _counts(pool, ANA, ana_threads)
    empty = [table for table, n in before.items() if n == 0]
    assert empty == [], f"the test user should have rows in every store, not in {empty}"
    others_before = {
        scope: _counts(pool, scope, [ids["thread"], ids["approval_thread"]])
        for scope, ids in others.items()
    }

    deleted = forget_user(worker_pool, ANA)

    after = _counts(pool, ANA, ana_threads)
    print("\nerasure (table: before -> deleted -> after):")
    for table in before:
        print(f"  {table:<20} {before[table]:>4} -> {deleted[table]:>4} -> {after[table]}")
    assert after == dict.fromkeys(before, 0)
    assert all(deleted[table] >= before[table] for table in before)
    for scope, ids in others.items():
        assert (
            _counts(pool, scope, [ids["thread"], ids["approval_thread"]]) == (others_before[scope])
        ), f"{scope} lost rows"
