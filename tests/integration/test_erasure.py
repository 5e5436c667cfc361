"""Forgetting a user reaches every store, and nobody else's data."""

from __future__ import annotations

from typing import Any

import psycopg
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg_pool import ConnectionPool

from graphs.agent import make_graph
from recollect import thread_config, user_turn
from recollect.privacy.forget import CHECKPOINT_TABLES, USER_TABLES, forget_user
from recollect.state.context import Context
from recollect.store.scope import Scope
from recollect.store.server import CONNECTION_KWARGS
from recollect.store.threads import claim_thread

ANA = Scope.for_user("acme", "ana")
BO = Scope.for_user("acme", "bo")

USER_ID_TABLES = """
SELECT DISTINCT table_name FROM information_schema.columns
WHERE table_schema = 'public' AND column_name = 'user_id'
"""


def _converse(pool: ConnectionPool[Any], checkpointer: PostgresSaver, scope: Scope) -> str:
    thread = f"{scope.user_id}-thread"
    claim_thread(pool, scope, thread)
    agent = make_graph(checkpointer=checkpointer)
    ctx = Context(user_id=scope.user_id, org_id=scope.org_id)
    for text in ("hello", "my order is 8842-B"):
        agent.invoke(user_turn(text), config=thread_config(thread), context=ctx)
    return thread


def _checkpoint_rows(database_uri: str, thread: str) -> dict[str, int]:
    with psycopg.connect(database_uri, **CONNECTION_KWARGS) as conn:
        return {
            t: conn.execute(
                f"SELECT count(*) AS n FROM {t} WHERE thread_id = %s",
                (thread,),
            ).fetchone()["n"]
            for t in CHECKPOINT_TABLES
        }


def test_every_table_with_a_user_id_is_covered(database_uri: str) -> None:
    with psycopg.connect(database_uri, **CONNECTION_KWARGS) as conn:
        tables = {r["table_name"] for r in conn.execute(USER_ID_TABLES).fetchall()}
    assert tables - set(USER_TABLES) == set(), "forget_user does not cover these tables"


def test_forget_removes_the_user_everywhere_and_only_them(
    pool: ConnectionPool[Any],
    worker_pool: ConnectionPool[Any],
    checkpointer: PostgresSaver,
    database_uri: str,
) -> None:
    ana_thread = _converse(pool, checkpointer, ANA)
    bo_thread = _converse(pool, checkpointer, BO)
    bo_before = _checkpoint_rows(database_uri, bo_thread)
    assert all(bo_before.values())
    assert all(_checkpoint_rows(database_uri, ana_thread).values())

    deleted = forget_user(worker_pool, ANA)

    assert deleted["threads"] == 1
    assert all(deleted[t] > 0 for t in CHECKPOINT_TABLES)
    assert _checkpoint_rows(database_uri, ana_thread) == dict.fromkeys(CHECKPOINT_TABLES, 0)
    assert _checkpoint_rows(database_uri, bo_thread) == bo_before
    assert make_graph(checkpointer=checkpointer).get_state(thread_config(ana_thread)).values == {}
    assert forget_user(worker_pool, ANA) == dict.fromkeys([*CHECKPOINT_TABLES, *USER_TABLES], 0)
