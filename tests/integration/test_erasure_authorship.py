"""Forgetting reaches what a user wrote and did outside her own rows: shared facts she authored
are deleted, her decisions in other people's workflows stay but name a pseudonym.

The proof is a scan of every text-like column of every table in the database, as a superuser,
for her id and for a string planted in everything she wrote.
"""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg import sql
from psycopg_pool import ConnectionPool

from graphs.approvals import Approvals
from recollect.longterm.facts import LongTermMemory
from recollect.longterm.records import FactCategory, NewFact
from recollect.privacy.export import export_user
from recollect.privacy.forget import PSEUDONYMISE_ACTOR, forget_user
from recollect.store.pool import use_pool
from recollect.store.scope import ORG_ADMIN, ORG_OWNER, Scope
from recollect.store.server import CONNECTION_KWARGS
from recollect.store.tenancy import scoped
from tests.support.db import all_rows, superuser_conninfo
from tests.support.tenant_data import populate_user

ALICE = Scope.for_user("acme", "alice-zq")
BOB = Scope.for_user("acme", "bob")
PLANTED = "PLANT-7f3a9c"
TEXT_TYPES = ("text", "character varying", "jsonb", "json", "ARRAY")

COLUMNS = """
SELECT c.table_name, c.column_name, c.data_type FROM information_schema.columns AS c
JOIN information_schema.tables AS t USING (table_schema, table_name)
WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'
ORDER BY 1, 2
"""


def _hits(pool: ConnectionPool[Any], needles: tuple[str, ...]) -> dict[str, list[str]]:
    """`table.column` -> the matching values, over every text, JSON, array and byte column."""
    found: dict[str, list[str]] = {}
    with psycopg.connect(superuser_conninfo(pool), **CONNECTION_KWARGS) as conn:
        for column in conn.execute(COLUMNS).fetchall():
            table, name, kind = column["table_name"], column["column_name"], column["data_type"]
            if kind == "bytea":
                value = sql.SQL("encode({}, 'escape')").format(sql.Identifier(name))
            elif kind in TEXT_TYPES:
                value = sql.SQL("{}::text").format(sql.Identifier(name))
            else:
                continue
            query = sql.SQL("SELECT {v} AS v FROM {t} WHERE {v} ILIKE ANY(%s)").format(
                v=value, t=sql.Identifier(table)
            )
            rows = conn.execute(query, ([f"%{n}%" for n in needles],)).fetchall()
            if rows:
                found[f"{table}.{name}"] = [str(r["v"])[:120] for r in rows]
    return found


def _alice_everywhere(pool: ConnectionPool[Any], checkpointer: PostgresSaver) -> list[str]:
    """Alice's own data in every store, a shared fact she wrote, and two decisions she made
    as a reviewer on Bob's requests; returns Bob's workflow ids."""
    populate_user(pool, checkpointer, ALICE)
    populate_user(pool, checkpointer, BOB)
    memory = LongTermMemory(pool)
    memory.remember(
        ALICE,
        NewFact(text=f"alice-zq keeps her locker code {PLANTED}",
                category=FactCategory.BIOGRAPHICAL, confidence=0.9),
    )  # fmt: skip
    memory.remember(
        Scope.for_org("acme", "alice-zq", frozenset({ORG_ADMIN})),
        NewFact(text=f"Deploys need a second pair of eyes {PLANTED}",
                category=FactCategory.PREFERENCE, confidence=0.9),
    )  # fmt: skip
    memory.remember(
        Scope.for_org("acme", "bob", frozenset({ORG_ADMIN})),
        NewFact(text="The office closes at six", category=FactCategory.PREFERENCE, confidence=0.9),
    )
    approvals = Approvals(pool, checkpointer)
    with use_pool(pool):
        paid = approvals.request(
            org_id="acme", user_id="bob", order_id="A-1", amount="20", reason="late"
        ).id
        approvals.approve(paid, org_id="acme", by="ALICE-ZQ", note=f"fine {PLANTED}")
        refused = approvals.request(
            org_id="acme", user_id="bob", order_id="A-2", amount="30", reason="broken"
        ).id
        approvals.reject(refused, org_id="acme", by="alice-zq", reason=f"no photo {PLANTED}")
    return [paid, refused]


def test_forget_leaves_only_pseudonymised_audit_rows_in_any_table(
    pool: ConnectionPool[Any], worker_pool: ConnectionPool[Any], checkpointer: PostgresSaver
) -> None:
    bobs = _alice_everywhere(pool, checkpointer)
    before = _hits(pool, ("alice-zq", PLANTED))
    assert {"facts.text", "approval_audit.actor", "approval_workflows.decided_by",
            "refunds.approved_by", "approval_audit.note"} <= set(before)  # fmt: skip

    forget_user(worker_pool, ALICE)

    after = _hits(pool, ("alice-zq", PLANTED))
    print("\nafter forget, matches per column:", {k: len(v) for k, v in after.items()})
    assert after == {}, f"her id or her words remain: {after}"
    acted = all_rows(
        pool,
        "SELECT workflow_id, transition, actor, note FROM approval_audit "
        "WHERE workflow_id = ANY(%s) AND transition IN ('approve', 'reject') ORDER BY 1",
        bobs,
    )
    assert len(acted) == 2
    alias = acted[0]["actor"]
    assert alias.startswith("forgotten-")
    assert len(alias) == len("forgotten-") + 12
    assert all(a["actor"] == alias and a["note"] is None for a in acted)
    decided = all_rows(
        pool, "SELECT decided_by, state FROM approval_workflows WHERE id = ANY(%s)", bobs
    )
    assert {(d["decided_by"], d["state"]) for d in decided} == {
        (alias, "completed"),
        (alias, "rejected"),
    }
    (refund,) = all_rows(pool, "SELECT approved_by FROM refunds WHERE workflow_id = ANY(%s)", bobs)
    assert refund["approved_by"] == alias
    shared = all_rows(pool, "SELECT text FROM facts WHERE user_id = %s", ORG_OWNER)
    assert [f["text"] for f in shared] == ["The office closes at six"]


def test_the_pseudonym_is_stable_per_person_and_differs_between_people(
    pool: ConnectionPool[Any], worker_pool: ConnectionPool[Any], checkpointer: PostgresSaver
) -> None:
    approvals = Approvals(pool, checkpointer)

    def carols_request_decided_by(reviewer: str, order: str) -> str:
        with use_pool(pool):
            workflow = approvals.request(
                org_id="acme", user_id="carol", order_id=order, amount="5", reason="x"
            ).id
            approvals.approve(workflow, org_id="acme", by=reviewer)
        return workflow

    first = carols_request_decided_by("alice-zq", "C-1")
    by_bob = carols_request_decided_by("bob", "C-2")
    forget_user(worker_pool, ALICE)
    again = carols_request_decided_by("alice-zq", "C-3")  # she comes back, and acts again
    forget_user(worker_pool, ALICE)
    forget_user(worker_pool, BOB)
    decided = {
        r["id"]: r["decided_by"]
        for r in all_rows(pool, "SELECT id, decided_by FROM approval_workflows")
    }
    assert decided[first] == decided[again] != decided[by_bob]
    assert all(alias.startswith("forgotten-") for alias in decided.values())


def test_export_includes_shared_facts_she_wrote_and_what_she_did_in_others_workflows(
    pool: ConnectionPool[Any], checkpointer: PostgresSaver
) -> None:
    bobs = _alice_everywhere(pool, checkpointer)
    document = export_user(pool, ALICE, checkpointer)
    assert [f["text"] for f in document["authored_shared_facts"]] == [
        f"Deploys need a second pair of eyes {PLANTED}"
    ]
    assert [(a["workflow_id"], a["transition"]) for a in document["acted_in_others_workflows"]] == [
        (bobs[0], "approve"),
        (bobs[1], "reject"),
    ]
    bobs_export = export_user(pool, BOB, checkpointer)
    assert [f["text"] for f in bobs_export["authored_shared_facts"]] == ["The office closes at six"]
    assert bobs_export["acted_in_others_workflows"] == []


def test_only_the_worker_role_pseudonymises_an_actor(
    pool: ConnectionPool[Any], worker_pool: ConnectionPool[Any]
) -> None:
    """A served request runs as the app role: it cannot erase its own caller's trail."""
    with pytest.raises(psycopg.errors.InsufficientPrivilege), scoped(pool, ALICE) as conn:
        conn.execute(PSEUDONYMISE_ACTOR)
    with scoped(worker_pool, ALICE) as conn:
        row = conn.execute(PSEUDONYMISE_ACTOR).fetchone()
    assert row is not None
    assert row["alias"].startswith("forgotten-")
