"""Organisation-shared facts: every user of the org reads them, only org-scoped writers with
`org_admin` change them, and no other organisation sees them."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from psycopg_pool import ConnectionPool

from recollect.longterm.facts import LongTermMemory, SharedWriteRefusedError
from recollect.longterm.records import FactCategory, NewFact, RememberAction
from recollect.privacy.forget import forget_user
from recollect.store.scope import ORG_ADMIN, ORG_OWNER, Scope
from recollect.store.tenancy import scoped

ADMIN = frozenset({ORG_ADMIN})
ACME_ANA = Scope.for_org("acme", "ana", ADMIN)
ACME_BO = Scope.for_org("acme", "bo", ADMIN)
GLOBEX_CY = Scope.for_org("globex", "cy", ADMIN)
INSERT_SHARED = """
INSERT INTO facts (org_id, user_id, category, text, confidence)
VALUES ('acme', %s, 'preference', 'we deploy on Mondays', 0.9)
"""


def _convention(text: str) -> NewFact:
    return NewFact(
        text=text, category=FactCategory.PREFERENCE, subject="deploy day", confidence=0.9
    )


def test_the_org_reads_shared_facts_and_other_orgs_do_not(pool: ConnectionPool[Any]) -> None:
    memory = LongTermMemory(pool)
    memory.remember(ACME_ANA, _convention("The team deploys on Fridays"))

    assert [f.text for f in memory.facts(ACME_BO)] == ["The team deploys on Fridays"]
    assert [f.user_id for f in memory.facts(ACME_BO)] == [ORG_OWNER]
    recalled = memory.recall(ACME_BO, "when does the team deploy")
    assert [r.fact.text for r in recalled.facts] == ["The team deploys on Fridays"]
    assert memory.facts(GLOBEX_CY) == []
    assert memory.recall(GLOBEX_CY, "when does the team deploy").facts == ()
    assert memory.facts(Scope.for_user("acme", "bo")) == [], "personal memory stays personal"


def test_any_org_writer_supersedes_a_convention(pool: ConnectionPool[Any]) -> None:
    memory = LongTermMemory(pool)
    memory.remember(ACME_ANA, _convention("The team deploys on Fridays"))
    result = memory.remember(ACME_BO, _convention("The team deploys on Tuesdays"))
    assert result.action is RememberAction.SUPERSEDED
    assert [f.text for f in memory.facts(ACME_ANA)] == ["The team deploys on Tuesdays"]


def test_a_user_scoped_transaction_reads_but_cannot_write_shared_rows(
    pool: ConnectionPool[Any],
) -> None:
    LongTermMemory(pool).remember(ACME_ANA, _convention("The team deploys on Fridays"))
    bo = Scope.for_user("acme", "bo")
    with scoped(pool, bo) as conn:
        rows = conn.execute("SELECT text FROM facts").fetchall()
        changed = conn.execute("UPDATE facts SET text = 'hijacked'").rowcount
        deleted = conn.execute("DELETE FROM facts").rowcount
    assert [r["text"] for r in rows] == ["The team deploys on Fridays"]
    assert (changed, deleted) == (0, 0)
    with pytest.raises(psycopg.errors.InsufficientPrivilege), scoped(pool, bo) as conn:
        conn.execute(INSERT_SHARED, (ORG_OWNER,))
    with scoped(pool, Scope.for_user("globex", "cy")) as conn:
        assert conn.execute("SELECT text FROM facts").fetchall() == []


def test_a_member_without_org_admin_reads_shared_memory_and_changes_none_of_it(
    pool: ConnectionPool[Any],
) -> None:
    memory = LongTermMemory(pool)
    kept = memory.remember(ACME_ANA, _convention("The team deploys on Fridays")).fact
    member = Scope.for_org("acme", "bo")
    with pytest.raises(SharedWriteRefusedError, match="org_admin"):
        memory.remember(member, _convention("The team deploys on Mondays"))
    with pytest.raises(SharedWriteRefusedError):
        memory.forget(member, kept.id)
    with scoped(pool, member) as conn:  # below the engine, row-level security says the same
        changed = conn.execute("UPDATE facts SET text = 'hijacked'").rowcount
        deleted = conn.execute("DELETE FROM facts").rowcount
    assert (changed, deleted) == (0, 0)
    with pytest.raises(psycopg.errors.InsufficientPrivilege), scoped(pool, member) as conn:
        conn.execute(INSERT_SHARED, (ORG_OWNER,))
    assert [(f.text, f.user_id, f.metadata) for f in memory.facts(member)] == [
        ("The team deploys on Fridays", ORG_OWNER, {"written_by": "ana"})
    ]
    with scoped(pool, member) as conn:
        row = conn.execute("SELECT author_id FROM facts WHERE id = %s", (kept.id,)).fetchone()
    assert row == {"author_id": "ana"}


def test_the_reserved_owner_is_no_user_and_erasure_takes_only_what_she_wrote(
    pool: ConnectionPool[Any],
    worker_pool: ConnectionPool[Any],
) -> None:
    with pytest.raises(ValueError, match="reserved"):
        Scope.for_user("acme", ORG_OWNER)
    memory = LongTermMemory(pool)
    memory.remember(ACME_ANA, _convention("The team deploys on Fridays"))
    memory.remember(ACME_BO, _convention("Reviews happen before noon"))
    forget_user(worker_pool, Scope.for_user("acme", "ana"))
    assert [f.text for f in memory.facts(ACME_BO)] == ["Reviews happen before noon"]


def test_an_import_into_shared_memory_names_its_writer_on_every_fact(
    pool: ConnectionPool[Any],
) -> None:
    memory = LongTermMemory(pool)
    sourced = NewFact(
        text="Releases are tagged on main",
        category=FactCategory.PREFERENCE,
        confidence=0.9,
        metadata={"source": "handbook"},
    )
    assert memory.ingest(ACME_ANA, [_convention("The team deploys on Fridays"), sourced]) == 2
    assert sorted((f.text, f.user_id, f.metadata) for f in memory.facts(ACME_BO)) == [
        ("Releases are tagged on main", ORG_OWNER, {"source": "handbook", "written_by": "ana"}),
        ("The team deploys on Fridays", ORG_OWNER, {"written_by": "ana"}),
    ]
    assert sourced.metadata == {"source": "handbook"}  # the caller's fact is left as it was
