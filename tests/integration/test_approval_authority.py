"""Workflows that cannot be forged: the decision lives in the workflow's record, written only by
a reviewer who is not the requester, and each normalised order is refunded at most once.

Everything runs through the real approval graph, the Postgres checkpointer and the app role.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from langgraph.types import Command
from psycopg_pool import ConnectionPool

from graphs.approvals import Approvals
from recollect.approvals.errors import (
    DecisionRefusedError,
    ExecutionRefusedError,
    WorkflowNotFoundError,
)
from recollect.approvals.machine import WorkflowState
from recollect.state.context import Context
from recollect.store.acting import acting_as
from recollect.store.errors import RecollectError
from recollect.store.pool import use_pool
from recollect.store.scope import REVIEWER, Scope
from recollect.store.tenancy import scoped
from tests.support.db import all_rows

REQUESTER = "alice-zq"
SELF_APPROVALS = (
    "ALICE-ZQ",  # case
    "alice-zq\u200b",  # zero-width space
    "\u200dAlice-Zq\u2060",  # zero-width joiner and word joiner
    "\uff41\uff4c\uff49\uff43\uff45-\uff5a\uff51",  # full-width letters
    "alice\u2010zq",  # U+2010 hyphen
    "alice\uff0dzq",  # full-width hyphen-minus
    " alice-zq ",  # padding
    "\u0430lice-zq",  # Cyrillic a: a mix of scripts, refused outright
    "al\u0456ce-zq",  # Cyrillic i
)
ORDER_SPELLINGS = ("ORD-77", "ord-77", "ORD-77\u200b", "ORD\u201077")


@pytest.fixture
def approvals(pool: ConnectionPool[Any]) -> Iterator[Approvals]:
    """The tests' direct graph calls act as the requester: the forger is the owner of the
    workflow's thread, who may write its checkpoints but not its decision."""
    with use_pool(pool), acting_as(Scope.for_user("acme", REQUESTER)):
        yield Approvals(pool)


def _request(approvals: Approvals, user: str = REQUESTER, order: str = "8842-B") -> str:
    return approvals.request(
        org_id="acme", user_id=user, order_id=order, amount="249.00", reason="charged twice"
    ).id


def _refunds(pool: ConnectionPool[Any]) -> list[dict[str, Any]]:
    """Every refund row in the database, read as a superuser (no policy hides any)."""
    return all_rows(pool, "SELECT * FROM refunds ORDER BY id")


def _record(pool: ConnectionPool[Any], workflow_id: str) -> dict[str, Any]:
    rows = all_rows(pool, "SELECT * FROM approval_workflows WHERE id = %s", workflow_id)
    assert len(rows) == 1
    return rows[0]


def test_a_forged_approval_in_the_checkpoint_pays_nothing(
    approvals: Approvals, pool: ConnectionPool[Any]
) -> None:
    workflow_id = _request(approvals)
    approvals.reject(workflow_id, org_id="acme", by="maria", reason="not eligible")
    config = approvals.config_for(workflow_id, org_id="acme")
    forged = {
        "workflow_state": "approved",
        "decision": {
            "decision": "approve",
            "by": "maria",
            "org_id": "acme",
            "at": "2026-01-01T00:00:00+00:00",
            "note": None,
        },
    }
    approvals.graph.update_state(config, forged, as_node="review")
    assert approvals.graph.get_state(config).next == ("start_execution",)

    with use_pool(pool), pytest.raises(ExecutionRefusedError, match="rejected in its record"):
        approvals.graph.invoke(None, config, context=Context(org_id="acme", user_id=REQUESTER))

    assert _refunds(pool) == []
    record = _record(pool, workflow_id)
    assert (record["state"], record["decision"]) == ("rejected", "reject")
    audit = all_rows(
        pool, "SELECT * FROM approval_audit WHERE workflow_id = %s ORDER BY at", workflow_id
    )
    assert [a["transition"] for a in audit] == ["create", "submit", "reject", "refused"]
    refused = audit[-1]
    assert (refused["from_state"], refused["to_state"]) == ("approved", "rejected")
    assert "nothing was paid" in refused["note"]


def test_a_forged_approval_of_an_undecided_workflow_pays_nothing(
    approvals: Approvals, pool: ConnectionPool[Any]
) -> None:
    workflow_id = _request(approvals)
    config = approvals.config_for(workflow_id, org_id="acme")
    for as_node, state in (("review", "approved"), ("start_execution", "executing")):
        approvals.graph.update_state(config, {"workflow_state": state}, as_node=as_node)
        with use_pool(pool), pytest.raises(ExecutionRefusedError, match="undecided"):
            approvals.graph.invoke(None, config, context=Context(org_id="acme", user_id=REQUESTER))
    assert _refunds(pool) == []
    assert _record(pool, workflow_id)["state"] == "submitted_for_review"


def test_execution_pays_the_stored_request_not_an_edited_one(
    approvals: Approvals, pool: ConnectionPool[Any]
) -> None:
    """An approval covers what was approved: a checkpoint edited between the decision and the
    payment does not change the amount."""
    workflow_id = _request(approvals)
    config = approvals.config_for(workflow_id, org_id="acme")
    with use_pool(pool):
        approvals.graph.invoke(
            Command(resume={"decision": "approve", "by": "maria"}),
            config,
            context=Context(org_id="acme", user_id="maria", permissions=(REVIEWER,)),
            interrupt_before=["start_execution"],
        )
        approvals.graph.update_state(
            config,
            {"request": {"order_id": "8842-B", "amount": "99999.00", "reason": "x"}},
        )
        approvals.graph.invoke(None, config, context=Context(org_id="acme", user_id=REQUESTER))
    (refund,) = _refunds(pool)
    assert str(refund["amount"]) == "249.00"
    assert refund["approved_by"] == "maria"


@pytest.mark.parametrize("by", SELF_APPROVALS)
def test_the_requester_cannot_approve_under_another_spelling(
    approvals: Approvals, pool: ConnectionPool[Any], by: str
) -> None:
    workflow_id = _request(approvals)
    with pytest.raises(RecollectError) as refused:
        approvals.approve(workflow_id, org_id="acme", by=by)
    message = str(refused.value)
    assert "\n" not in message
    assert "cannot decide" in message or "mixes" in message
    assert _record(pool, workflow_id)["decision"] is None
    assert approvals.show(workflow_id, org_id="acme").awaiting_review


@pytest.mark.parametrize("by", SELF_APPROVALS[:7])
def test_the_review_step_refuses_the_requester_whatever_the_caller_sends(
    approvals: Approvals, pool: ConnectionPool[Any], by: str
) -> None:
    """Straight into the graph, past the Python API's own check, as a reviewer identity that
    is the requester under another spelling."""
    workflow_id = _request(approvals)
    config = approvals.config_for(workflow_id, org_id="acme")
    with use_pool(pool):
        approvals.graph.invoke(
            Command(resume={"decision": "approve", "by": by}),
            config,
            context=Context(org_id="acme", user_id=by, permissions=(REVIEWER,)),
        )
    view = approvals.show(workflow_id, org_id="acme")
    assert view.awaiting_review
    assert view.review_error == f"{REQUESTER!r} asked for this refund and cannot decide it"
    assert _record(pool, workflow_id)["decision"] is None


def test_a_decision_without_the_reviewer_permission_is_refused(
    approvals: Approvals, pool: ConnectionPool[Any]
) -> None:
    workflow_id = _request(approvals)
    config = approvals.config_for(workflow_id, org_id="acme")
    with use_pool(pool):
        approvals.graph.invoke(
            Command(resume={"decision": "approve", "by": "bob"}),
            config,
            context=Context(org_id="acme", user_id="bob"),
        )
    view = approvals.show(workflow_id, org_id="acme")
    assert view.awaiting_review
    assert view.review_error == "'bob' is not a reviewer of organisation 'acme'"
    signed_as_other = {"decision": "approve", "by": "maria"}
    with use_pool(pool):
        approvals.graph.invoke(
            Command(resume=signed_as_other),
            config,
            context=Context(org_id="acme", user_id="bob", permissions=(REVIEWER,)),
        )
    assert approvals.show(workflow_id, org_id="acme").review_error == (
        "the decision is signed 'maria', but it comes from 'bob'"
    )
    assert _record(pool, workflow_id)["decision"] is None


def test_the_database_writes_a_decision_only_for_another_persons_reviewer(
    approvals: Approvals, pool: ConnectionPool[Any]
) -> None:
    """As the app role, with no graph in the way: the decision columns cannot be written
    directly, and the decision function checks reviewer, organisation and requester."""
    workflow_id = _request(approvals)
    decide = "SELECT recollect_decide_workflow(%s, 'approve', NULL, now())"
    cases = (
        (Scope.for_user("acme", "bob"), "is not a reviewer"),
        (Scope.for_user("acme", REQUESTER, frozenset({REVIEWER})), "cannot decide it"),
        (Scope.for_user("globex", "maria", frozenset({REVIEWER})), "no approval workflow"),
    )
    for scope, refusal in cases:
        with (
            pytest.raises(psycopg.errors.RaiseException, match=refusal),
            scoped(pool, scope) as conn,
        ):
            conn.execute(decide, (workflow_id,))
    for scope in (
        Scope.for_user("acme", REQUESTER),
        Scope.for_user("acme", "maria", frozenset({REVIEWER})),
    ):
        with pytest.raises(psycopg.errors.InsufficientPrivilege), scoped(pool, scope) as conn:
            conn.execute(
                "UPDATE approval_workflows SET decision = 'approve', decided_by = 'maria' "
                "WHERE id = %s",
                (workflow_id,),
            )
    with (
        pytest.raises(psycopg.errors.InsufficientPrivilege),
        scoped(pool, Scope.for_user("acme", REQUESTER)) as conn,
    ):
        conn.execute(
            "INSERT INTO approval_workflows (id, thread_id, org_id, user_id, kind, state, "
            "request, decision, decided_by, created_at, updated_at) VALUES ('w-forged', "
            "'approval-w-forged', 'acme', %s, 'refund', 'approved', '{}', 'approve', 'maria', "
            "now(), now())",
            (REQUESTER,),
        )
    assert _record(pool, workflow_id)["decision"] is None
    with scoped(pool, Scope.for_user("acme", "maria", frozenset({REVIEWER}))) as conn:
        row = conn.execute(decide, (workflow_id,)).fetchone()
    assert row is not None
    assert row["recollect_decide_workflow"] == "approved"
    assert _record(pool, workflow_id)["decided_by"] == "maria"


def test_four_spellings_of_an_order_are_one_order_refunded_once(
    approvals: Approvals, pool: ConnectionPool[Any]
) -> None:
    states = []
    for spelling in ORDER_SPELLINGS:
        workflow_id = _request(approvals, order=spelling)
        assert _record(pool, workflow_id)["request"]["order_id"] == "ORD-77"
        states.append(approvals.approve(workflow_id, org_id="acme", by="maria").state)
    other = _request(approvals, user="erin", order="o\u200crd\u201177")
    states.append(approvals.approve(other, org_id="acme", by="maria").state)
    assert states == [WorkflowState.COMPLETED] + [WorkflowState.FAILED] * 4
    refunds = _refunds(pool)
    assert [(r["order_id"], r["user_id"]) for r in refunds] == [("ORD-77", REQUESTER)]


def test_open_requests_for_one_order_are_one_request(approvals: Approvals) -> None:
    first = _request(approvals, order=ORDER_SPELLINGS[0])
    again = [
        approvals.request(
            org_id="acme", user_id=REQUESTER, order_id=spelling, amount="249", reason="again"
        )
        for spelling in ORDER_SPELLINGS[1:]
    ]
    assert {v.id for v in again} == {first}
    assert all(v.reused for v in again)


def test_requesters_see_their_own_workflows_and_reviewers_the_organisations(
    approvals: Approvals, pool: ConnectionPool[Any]
) -> None:
    alices = _request(approvals)
    erins = _request(approvals, user="erin", order="9000")
    approvals.approve(erins, org_id="acme", by="maria")

    as_alice: dict[str, Any] = {"viewer": REQUESTER, "permissions": ()}
    assert [w.id for w in approvals.workflows(org_id="acme", **as_alice)] == [alices]
    assert approvals.show(alices, org_id="acme", **as_alice).workflow.user_id == REQUESTER
    with pytest.raises(WorkflowNotFoundError):
        approvals.show(erins, org_id="acme", **as_alice)

    as_maria: dict[str, Any] = {"viewer": "maria", "permissions": (REVIEWER,)}
    assert {w.id for w in approvals.workflows(org_id="acme", **as_maria)} == {alices, erins}
    assert len(approvals.show(erins, org_id="acme", **as_maria).refunds) == 1
    assert approvals.workflows(org_id="globex", **as_maria) == []

    with scoped(pool, Scope.for_user("acme", REQUESTER)) as conn:
        seen = {
            table: conn.execute(f"SELECT count(*) AS n FROM {table}").fetchone()["n"]  # type: ignore[index]
            for table in ("approval_workflows", "approval_audit", "refunds")
        }
    assert seen == {"approval_workflows": 1, "approval_audit": 2, "refunds": 0}


def test_a_decision_made_once_is_not_made_again(approvals: Approvals) -> None:
    workflow_id = _request(approvals)
    approvals.reject(workflow_id, org_id="acme", by="maria", reason="no receipt")
    with pytest.raises(DecisionRefusedError, match="no longer awaiting review"):
        approvals.approve(workflow_id, org_id="acme", by="sam")


def test_an_answer_planted_in_a_reviewers_name_stays_refused_when_the_reviewer_comes(
    approvals: Approvals, pool: ConnectionPool[Any]
) -> None:
    """The requester answers the gate signed as the reviewer; it is refused. When the
    reviewer later resumes with a rejection, the planted approval is not judged again under
    the reviewer's identity: the rejection is what counts."""
    workflow_id = _request(approvals)
    config = approvals.config_for(workflow_id, org_id="acme")
    with use_pool(pool):
        approvals.graph.invoke(
            Command(resume={"decision": "approve", "by": "maria"}),
            config,
            context=Context(org_id="acme", user_id=REQUESTER),
        )
    assert approvals.show(workflow_id, org_id="acme").review_error == (
        f"{REQUESTER!r} is not a reviewer of organisation 'acme'"
    )
    view = approvals.reject(workflow_id, org_id="acme", by="maria", reason="no receipt")
    assert view.state is WorkflowState.REJECTED
    assert _record(pool, workflow_id)["decision"] == "reject"
    assert _refunds(pool) == []
