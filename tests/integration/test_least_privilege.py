"""The app role against every table and function: what a request-serving connection can do.

Two users have threads with checkpoints and queued jobs. Connected as the app role (what the
CLI, `langgraph dev` and the Platform serve requests with), an unscoped connection sees no
checkpoint, a scoped one sees only its own, and every cross-tenant function is refused, while
the worker role may call them only with bounded arguments. A role with no grants at all can
call none of them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from psycopg.conninfo import make_conninfo
from psycopg_pool import ConnectionPool

from graphs.agent import make_graph
from recollect import thread_config, user_turn
from recollect.extraction.queue import BufferedMessage, Debounce, enqueue
from recollect.history.owned_checkpoints import ScopedPostgresSaver
from recollect.state.context import Context
from recollect.store.errors import ThreadAccessError
from recollect.store.schema.definers import DEFINER_ROLE, JOB_FUNCTIONS, SCOPE_FUNCTIONS
from recollect.store.scope import Scope
from recollect.store.server import CONNECTION_KWARGS
from recollect.store.tenancy import scoped
from recollect.trace.store import thread_traces
from recollect.trace.writer import WRITER
from tests.support.db import superuser_conninfo
from tests.support.scripted_openai import ScriptedOpenAI

ALICE = Scope.for_user("acme", "alice")
BOB = Scope.for_user("acme", "bob")
CHECKPOINT_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
NO_GRANTS_ROLE = "recollect_nobody"


@pytest.fixture
def two_users(pool: ConnectionPool[Any], scripted_llm: ScriptedOpenAI) -> dict[str, str]:
    saver = ScopedPostgresSaver(pool)
    saver.retain = 0
    agent = make_graph(checkpointer=saver)
    threads = {}
    for scope in (ALICE, BOB):
        thread = f"{scope.user_id}-thread"
        ctx = Context(org_id=scope.org_id, user_id=scope.user_id, extract_after_idle_s=3600)
        agent.invoke(user_turn(f"I am {scope.user_id}"), thread_config(thread), context=ctx)
        message = BufferedMessage(f"m-{thread}", "user", "hi")
        enqueue(pool, scope, thread, [message], debounce=Debounce(3600, 9))
        threads[scope.user_id] = thread
    return threads


def _count(conn: psycopg.Connection[Any], table: str, thread: str | None = None) -> int:
    where = " WHERE thread_id = %s" if thread else ""
    row = conn.execute(f"SELECT count(*) AS n FROM {table}{where}", (thread,) if thread else ())
    found = row.fetchone()
    assert found is not None
    return int(found["n"])


def test_an_unscoped_app_role_sees_no_checkpoint_and_a_scoped_one_only_its_own(
    pool: ConnectionPool[Any], two_users: dict[str, str]
) -> None:
    with psycopg.connect(superuser_conninfo(pool), **CONNECTION_KWARGS) as admin:
        assert all(_count(admin, t) > 0 for t in CHECKPOINT_TABLES)
    with pool.connection() as conn:
        assert [_count(conn, t) for t in CHECKPOINT_TABLES] == [0, 0, 0]
        assert conn.execute("DELETE FROM checkpoints").rowcount == 0
    with scoped(pool, ALICE) as conn:
        assert _count(conn, "checkpoints") == _count(conn, "checkpoints", two_users["alice"]) > 0
        assert _count(conn, "checkpoints", two_users["bob"]) == 0
        deleted = conn.execute(
            "DELETE FROM checkpoints WHERE thread_id = %s", (two_users["bob"],)
        ).rowcount
        assert deleted == 0
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(
                "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, "
                "task_id, idx, channel, type, blob) VALUES (%s, '', 'x', 't', 0, 'c', 't', '')",
                (two_users["bob"],),
            )
    with scoped(pool, BOB) as conn:
        assert _count(conn, "checkpoints", two_users["bob"]) > 0


def test_writing_into_another_users_thread_is_refused(
    pool: ConnectionPool[Any], two_users: dict[str, str], scripted_llm: ScriptedOpenAI
) -> None:
    agent = make_graph(checkpointer=ScopedPostgresSaver(pool))
    bob = Context(org_id="acme", user_id="bob")
    with pytest.raises(ThreadAccessError, match="belongs to another user"):
        agent.invoke(user_turn("hijack"), thread_config(two_users["alice"]), context=bob)
    with scoped(pool, ALICE) as conn:
        assert _count(conn, "checkpoint_writes", two_users["alice"]) > 0
        row = conn.execute(
            "SELECT count(*) AS n FROM checkpoint_blobs WHERE thread_id = %s "
            "AND blob::text LIKE '%%hijack%%'",
            (two_users["alice"],),
        ).fetchone()
    assert row is not None
    assert row["n"] == 0


def test_traces_are_written_per_turn_and_only_their_owner_sees_or_writes_them(
    pool: ConnectionPool[Any], two_users: dict[str, str]
) -> None:
    WRITER.flush()
    with psycopg.connect(superuser_conninfo(pool), **CONNECTION_KWARGS) as admin:
        assert _count(admin, "memory_traces") == 2  # one turn each
    with pool.connection() as conn:
        assert _count(conn, "memory_traces") == 0
    with scoped(pool, ALICE) as conn:
        assert _count(conn, "memory_traces") == _count(conn, "memory_traces", two_users["alice"])
        assert _count(conn, "memory_traces", two_users["bob"]) == 0
        assert conn.execute("DELETE FROM memory_traces WHERE user_id = 'bob'").rowcount == 0
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(
                "INSERT INTO memory_traces (org_id, user_id, thread_id, turn, kind, trace) "
                "VALUES ('acme', 'bob', %s, 9, 'turn', '{}')",
                (two_users["bob"],),
            )
    assert [t.turn for t in thread_traces(pool, BOB, two_users["bob"])] == [1]
    assert thread_traces(pool, BOB, two_users["alice"]) == []


CROSS_TENANT_CALLS = {
    "recollect_claim_job": "SELECT * FROM recollect_claim_job(gen_random_uuid(), 60, NULL, true)",
    "recollect_claim_job_for_models": (
        "SELECT * FROM recollect_claim_job_for_models(gen_random_uuid(), 60, NULL, true, '{}')"
    ),
    "recollect_open_jobs": "SELECT recollect_open_jobs()",
    "recollect_job_counts": "SELECT * FROM recollect_job_counts()",
    "recollect_dead_jobs": "SELECT * FROM recollect_dead_jobs(10)",
    "recollect_retry_dead_job": "SELECT * FROM recollect_retry_dead_job(1)",
    "recollect_prune_jobs": "SELECT recollect_prune_jobs(7)",
    "recollect_idle_threads": "SELECT * FROM recollect_idle_threads(0, 10)",
    "recollect_protect": "SELECT recollect_protect('threads')",
}


@pytest.mark.parametrize("name", sorted(CROSS_TENANT_CALLS))
def test_the_app_role_cannot_call_a_cross_tenant_function(
    pool: ConnectionPool[Any], two_users: dict[str, str], name: str
) -> None:
    with pool.connection() as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute(CROSS_TENANT_CALLS[name])


UNBOUNDED_CALLS = {
    "lease of 1e9 s": "SELECT * FROM recollect_claim_job(gen_random_uuid(), 1e9, NULL, true)",
    "negative lease": "SELECT * FROM recollect_claim_job(gen_random_uuid(), -1, NULL, true)",
    "lease of a day, for some models": (
        "SELECT * FROM recollect_claim_job_for_models(gen_random_uuid(), 86400, NULL, true, '{}')"
    ),
    "prune everything": "SELECT recollect_prune_jobs(-1)",
    "prune today": "SELECT recollect_prune_jobs(0)",
    "a million dead letters": "SELECT * FROM recollect_dead_jobs(1000000)",
    "negative idle time": "SELECT * FROM recollect_idle_threads(-1, 10)",
    "backoff of a year": (
        "SELECT * FROM recollect_fail_job(1, gen_random_uuid(), 'x', 5, 31536000)"
    ),
    "negative attempts": "SELECT * FROM recollect_fail_job(1, gen_random_uuid(), 'x', -1, 1)",
}


@pytest.mark.parametrize("what", sorted(UNBOUNDED_CALLS))
def test_the_worker_role_is_refused_unbounded_arguments(
    worker_pool: ConnectionPool[Any], two_users: dict[str, str], what: str
) -> None:
    with (
        worker_pool.connection() as conn,
        pytest.raises(psycopg.errors.InvalidParameterValue, match="must be"),
    ):
        conn.execute(UNBOUNDED_CALLS[what])


def test_a_scope_claims_only_its_own_jobs_and_no_scope_claims_none(
    pool: ConnectionPool[Any], two_users: dict[str, str]
) -> None:
    claim = "SELECT * FROM recollect_claim_own_job(gen_random_uuid(), 60, %s, true)"
    with pool.connection() as conn:
        assert conn.execute(claim, (None,)).fetchall() == []
    with scoped(pool, ALICE) as conn:
        assert conn.execute(claim, (two_users["bob"],)).fetchall() == []
        [job] = conn.execute(claim, (None,)).fetchall()
    assert (job["user_id"], job["thread_id"]) == ("alice", two_users["alice"])
    with scoped(pool, ALICE) as conn:
        wrong_token = conn.execute(
            "SELECT * FROM recollect_fail_job(%s, gen_random_uuid(), 'x', 5, 1)", (job["id"],)
        ).fetchall()
    assert wrong_token == []


@pytest.fixture
def nobody(pool: ConnectionPool[Any]) -> Iterator[ConnectionPool[Any]]:
    """A login role with no grants at all (EXECUTE is not PUBLIC's any more)."""
    admin = superuser_conninfo(pool)
    with psycopg.connect(admin, **CONNECTION_KWARGS) as conn:
        if not conn.execute(
            "SELECT 1 FROM pg_roles WHERE rolname = %s", (NO_GRANTS_ROLE,)
        ).fetchone():
            conn.execute(f"CREATE ROLE {NO_GRANTS_ROLE} LOGIN")
        database = conn.execute("SELECT current_database() AS d").fetchone()
        assert database is not None
        conn.execute(f'GRANT CONNECT ON DATABASE "{database["d"]}" TO {NO_GRANTS_ROLE}')
    connections = ConnectionPool(
        make_conninfo(admin, user=NO_GRANTS_ROLE),
        min_size=1,
        max_size=1,
        kwargs=dict(CONNECTION_KWARGS),
        open=True,
    )
    yield connections
    connections.close()


def test_a_role_with_no_grants_can_call_no_function_of_ours(
    pool: ConnectionPool[Any], nobody: ConnectionPool[Any]
) -> None:
    with psycopg.connect(superuser_conninfo(pool), **CONNECTION_KWARGS) as admin:
        functions = admin.execute(
            """
            SELECT p.oid::regprocedure::text AS signature, p.prosecdef AS definer,
                   pg_get_userbyid(p.proowner) AS owner,
                   has_function_privilege('public', p.oid, 'EXECUTE') AS public_may
            FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace
              AND p.proname LIKE 'recollect\\_%'
            """
        ).fetchall()
        definer = admin.execute(
            "SELECT rolcanlogin, rolsuper, rolbypassrls FROM pg_roles WHERE rolname = %s",
            (DEFINER_ROLE,),
        ).fetchone()
    assert len(functions) >= 10
    assert [f["signature"] for f in functions if f["public_may"]] == []
    owners = {f["signature"].split("(")[0]: f["owner"] for f in functions}
    assert {owners[name] for name in (*JOB_FUNCTIONS, *SCOPE_FUNCTIONS)} == {DEFINER_ROLE}
    assert {f["owner"] for f in functions if f["definer"]} == {DEFINER_ROLE}
    assert definer == {"rolcanlogin": False, "rolsuper": False, "rolbypassrls": False}
    with nobody.connection() as conn:
        allowed = conn.execute(
            "SELECT p.oid::regprocedure::text AS signature FROM pg_proc p "
            "WHERE p.pronamespace = 'public'::regnamespace AND p.proname LIKE 'recollect\\_%%' "
            "AND has_function_privilege(p.oid, 'EXECUTE')"
        ).fetchall()
    assert allowed == []
    for call in CROSS_TENANT_CALLS.values():
        with nobody.connection() as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(call)
