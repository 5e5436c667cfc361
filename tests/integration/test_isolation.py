"""Fifty tenants, ten thousand random reads: the database never hands one tenant another's row.

Reads go through the app's own paths (recall, fact listing, threads, review queue, approvals,
profile) and as raw, unfiltered `SELECT *` on every table with a `user_id` column (found in
`information_schema`, so a new table is checked the day it is added), all as the app role.
"""

from __future__ import annotations

import random
import time
from decimal import Decimal
from typing import Any

from psycopg import sql
from psycopg_pool import ConnectionPool

from recollect.approvals.records import RefundRequest
from recollect.approvals.store import find_workflow, list_workflows, workflow_detail
from recollect.basestore.store import RecollectStore
from recollect.extraction.review import list_candidates
from recollect.longterm.facts import LongTermMemory
from recollect.longterm.records import FactCategory, NewEpisode, NewFact, ProfileEntry
from recollect.longterm.rerankers import LATE_INTERACTION, load_reranker
from recollect.store.schema.fact_words import WORDED_FROM
from recollect.store.scope import ORG_ADMIN, ORG_OWNER, REVIEWER, Scope
from recollect.store.tenancy import scoped
from recollect.store.threads import claim_thread, list_threads
from recollect.trace.store import PendingTrace, thread_traces, write_turns
from tests.support.code_centres import record_centre
from tests.support.db import all_rows
from tests.support.tenant_data import queue_job_and_refund

ORGS, USERS_PER_ORG, FACTS_PER_USER, READS = 5, 10, 20, 10_000
LARGE_USER = "user-1"
"""In each organisation, the user with enough facts to have their words listed."""
LISTED_ONLY = frozenset({"fact_words", "worded_scopes", "code_centres"})
"""Tables that hold rows only for a user whose words are listed or whose codes are centred."""
DIM = 8
WORDS = ["tea", "coffee", "lisbon", "rust", "python", "marathon", "jazz", "nuts", "cats", "hiking"]
USER_DATA_TABLES = """
SELECT DISTINCT table_name FROM information_schema.columns
WHERE table_schema = 'public' AND column_name = 'user_id' ORDER BY table_name
"""
RLS_FLAGS = """
SELECT relname, relrowsecurity, relforcerowsecurity FROM pg_class
WHERE relname = ANY(%s) AND relkind = 'r'
"""
ORG_READABLE = frozenset({"approval_workflows", "approval_audit", "refunds"})
"""Reviewers read their organisation's workflows: foreign there means another organisation."""
INSERT_CANDIDATE = """
INSERT INTO fact_candidates (org_id, user_id, text, category, confidence, status, dedup_key)
VALUES (%(org_id)s, %(user_id)s, %(text)s, 'preference', 0.5, 'review', %(text)s)
"""


def _tenants() -> list[Scope]:
    return [
        Scope.for_user(f"org-{o}", f"user-{u}") for o in range(ORGS) for u in range(USERS_PER_ORG)
    ]


def _populate(pool: ConnectionPool[Any], rng: random.Random) -> None:
    memory = LongTermMemory(pool)
    store = RecollectStore(memory)
    encoder = LongTermMemory(pool, reranker=load_reranker(LATE_INTERACTION))
    for org in range(ORGS):
        memory.remember(
            Scope.for_org(f"org-{org}", "user-0", frozenset({ORG_ADMIN})),
            NewFact(text=f"org-{org} deploys on Fridays", category=FactCategory.PREFERENCE),
        )
    for scope in _tenants():
        tag = f"{scope.org_id}/{scope.user_id}"
        facts = [
            NewFact(text=f"{tag} likes {rng.choice(WORDS)} {i}",
                    category=FactCategory.PREFERENCE, confidence=0.9)
            for i in range(FACTS_PER_USER)
        ]  # fmt: skip
        vectors = [[rng.random() for _ in range(DIM)] for _ in facts]
        memory.ingest(scope, facts, vectors)
        encoder.persist_encodings(scope)  # as the default engine does after every write
        if scope.user_id == LARGE_USER:
            filler = [
                NewFact(text=f"{tag} likes {rng.choice(WORDS)} then {i}",
                        category=FactCategory.PREFERENCE)
                for i in range(WORDED_FROM)
            ]  # fmt: skip
            memory.ingest(scope, filler, [[rng.random() for _ in range(DIM)] for _ in filler])
            record_centre(pool, scope, [0.5] * DIM)  # as past `CENTRED_FROM` facts
        memory.set_profile(scope, [ProfileEntry(key="name", value=tag)])
        memory.record_episode(scope, NewEpisode(summary=f"{tag} talked about tea"))
        store.put((scope.org_id, scope.user_id, "facts", "notes"), "seat",
                  {"text": f"{tag} likes aisles"})  # fmt: skip
        claim_thread(pool, scope, f"{tag}/chat")
        write_turns(pool, [PendingTrace(scope, f"{tag}/chat", {"user_message": {"text": tag}})])
        with scoped(pool, scope) as conn:
            conn.execute(INSERT_CANDIDATE, {"org_id": scope.org_id, "user_id": scope.user_id,
                                            "text": f"{tag} maybe likes jazz"})  # fmt: skip
        request = RefundRequest(order_id=f"o-{scope.user_id}", amount=Decimal("5"), reason="broken")
        queue_job_and_refund(pool, scope, f"{tag}/chat", f"{scope.org_id}-{scope.user_id}", request)


def _reviewer(scope: Scope) -> Scope:
    """The tenant as a reviewer: approval reads then reach the whole organisation, no further."""
    return Scope.for_user(scope.org_id, scope.user_id, frozenset({REVIEWER}))


def _owners(rows: list[Any]) -> set[tuple[str, str]]:
    return {(r["org_id"], r["user_id"]) for r in rows}


def test_fifty_tenants_ten_thousand_reads_no_foreign_row(pool: ConnectionPool[Any]) -> None:
    rng = random.Random(7)
    started = time.perf_counter()
    _populate(pool, rng)
    tables = [r["table_name"] for r in all_rows(pool, USER_DATA_TABLES)]
    assert {"facts", "profiles", "episodes", "threads", "memory_jobs"} <= set(tables)
    unprotected = [
        r["relname"] for r in all_rows(pool, RLS_FLAGS, tables) if not r["relrowsecurity"]
    ]
    assert unprotected == [], "tables holding user data without row-level security"
    every = {t: len(all_rows(pool, f'SELECT 1 FROM "{t}"')) for t in tables}
    assert all(every.values()), f"every table should hold rows for the test: {every}"
    setup_s = time.perf_counter() - started

    memory = LongTermMemory(pool)
    store = RecollectStore(memory)
    tenants = _tenants()
    foreign: list[str] = []
    own_rows = 0

    def check(path: str, scope: Scope, owners: set[tuple[str, str]], org_wide: bool) -> None:
        nonlocal own_rows
        me = (scope.org_id, scope.user_id)
        shared = (scope.org_id, ORG_OWNER)  # the organisation's shared facts
        bad = {o for o in owners if (o[0] != scope.org_id if org_wide else o not in (me, shared))}
        if bad:
            foreign.append(f"{path} as {me}: {sorted(bad)}")
        own_rows += len(owners)

    def read(scope: Scope) -> None:
        nonlocal own_rows
        path = rng.randrange(11)
        other = rng.choice(tenants)
        if path == 0:
            got = memory.recall(scope, rng.choice(WORDS), k=10,
                                query_embedding=[rng.random() for _ in range(DIM)])  # fmt: skip
            check("recall", scope, {(f.fact.org_id, f.fact.user_id) for f in got.facts}, False)
            names = {p.value for p in got.profile}
            if names - {f"{scope.org_id}/{scope.user_id}"}:
                foreign.append(f"recall profile as {scope}: {names}")
        elif path == 1:
            check("facts", scope, {(f.org_id, f.user_id) for f in memory.facts(scope)}, False)
            org_scope = Scope.for_org(scope.org_id, scope.user_id)
            check("org facts", scope, {(f.org_id, f.user_id) for f in memory.facts(org_scope)},
                  False)  # fmt: skip
        elif path == 2:
            check("threads", scope, {(t.org_id, t.user_id) for t in list_threads(pool, scope)},
                  False)  # fmt: skip
        elif path == 3:
            items = list_candidates(pool, scope, ("review", "stored"))
            if any(not i.text.startswith(f"{scope.org_id}/{scope.user_id} ") for i in items):
                foreign.append(f"review list as {scope}")
            own_rows += len(items)
        elif path == 4:
            found = find_workflow(pool, _reviewer(scope), f"{other.org_id}-{other.user_id}")
            check("approvals show", scope, {(found.org_id, found.user_id)} if found else set(),
                  True)  # fmt: skip
        elif path == 5:
            detail = workflow_detail(pool, _reviewer(scope), f"{other.org_id}-{other.user_id}")
            owners = set()
            if detail is not None:
                owners = {(detail.record.org_id, detail.record.user_id)}
            check("approvals detail", scope, owners, True)
        elif path == 6:
            got_workflows = list_workflows(
                pool, _reviewer(scope), user_id=rng.choice([None, other.user_id])
            )
            check("approvals list", scope, {(w.org_id, w.user_id) for w in got_workflows}, True)
        elif path == 8:
            thread = f"{other.org_id}/{other.user_id}/chat"
            traces = thread_traces(pool, scope, thread)
            if any(t.trace["user_message"]["text"] != f"{scope.org_id}/{scope.user_id}"
                   for t in traces) or (traces and other != scope):  # fmt: skip
                foreign.append(f"traces of {thread} as {scope}")
            own_rows += len(traces)
        elif path == 9:
            found_items = store.search((scope.org_id, scope.user_id), limit=50)
            check("store search", scope, {(i.namespace[0], i.namespace[1]) for i in found_items},
                  False)  # fmt: skip
            if not any(i.key == "seat" for i in found_items):
                foreign.append(f"store search as {scope} misses its own item")
            own_rows += len(found_items)
        elif path == 7:
            got = memory.recall(scope, "name", k=1)
            if {p.value for p in got.profile} != {f"{scope.org_id}/{scope.user_id}"}:
                foreign.append(f"profile as {scope}: {got.profile}")
        else:
            table = rng.choice(tables)
            with scoped(pool, scope) as conn:
                rows = conn.execute(
                    sql.SQL("SELECT * FROM {}").format(sql.Identifier(table))
                ).fetchall()
            check(f"SELECT * FROM {table}", scope, _owners(rows), table in ORG_READABLE)

    reads_started = time.perf_counter()
    for _ in range(READS):
        read(rng.choice(tenants))
    # Every table, unfiltered, for every tenant (on top of the random reads above).
    for scope in tenants:
        with scoped(pool, scope) as conn:
            for table in tables:
                query = sql.SQL("SELECT * FROM {}").format(sql.Identifier(table))
                rows = conn.execute(query).fetchall()
                check(f"SELECT * FROM {table}", scope, _owners(rows), table in ORG_READABLE)
                if table not in LISTED_ONLY or scope.user_id == LARGE_USER:
                    assert rows, f"{table} shows {scope} none of their own rows"
    reads_s = time.perf_counter() - reads_started

    with pool.connection() as conn:
        unscoped = {
            t: len(conn.execute(sql.SQL("SELECT * FROM {}").format(sql.Identifier(t))).fetchall())
            for t in tables
        }
    print(
        f"\nisolation: {len(tenants)} tenants, {READS} random reads + "
        f"{len(tenants) * len(tables)} full-table reads over {len(tables)} tables: "
        f"{own_rows} own rows, {len(foreign)} foreign; unscoped rows {sum(unscoped.values())}; "
        f"setup {setup_s:.1f}s, reads {reads_s:.1f}s"
    )
    assert foreign == []
    assert own_rows > READS, "the reads must actually return the tenant's own rows"
    assert unscoped == dict.fromkeys(tables, 0), "with no scope set, nothing is visible"
