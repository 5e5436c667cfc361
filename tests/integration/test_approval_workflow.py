"""The approval subgraph on a real Postgres: the gate, decisions, refusals and the side effect."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langgraph.types import Command, StateSnapshot
from psycopg_pool import ConnectionPool

from graphs.approvals import Approvals
from recollect.approvals.errors import (
    DecisionRefusedError,
    InvalidDecisionError,
    InvalidRequestError,
    WorkflowNotFoundError,
)
from recollect.approvals.machine import WorkflowState
from recollect.approvals.store import DECISION_LOCK_CLASS
from recollect.state.context import Context
from recollect.store.acting import acting_as
from recollect.store.pool import use_pool
from recollect.store.scope import REVIEWER, Scope
from recollect.store.tenancy import scoped

CONSOLE = Scope.for_user("acme", "auditor", frozenset({REVIEWER}))
"""Whom the tests' direct graph calls act as: a reviewer of acme (checkpoints are behind RLS)."""


@pytest.fixture
def approvals(pool: ConnectionPool[Any]) -> Iterator[Approvals]:
    with use_pool(pool):
        yield Approvals(pool)


def _state(approvals: Approvals, config: Any) -> StateSnapshot:
    with acting_as(CONSOLE):
        return approvals.graph.get_state(config)


def _history(approvals: Approvals, config: Any) -> list[StateSnapshot]:
    with acting_as(CONSOLE):
        return list(approvals.graph.get_state_history(config))


def _count(pool: ConnectionPool[Any], sql: str, *params: Any) -> int:
    """Counted as a reviewer of `acme` would see it (the tables sit behind row-level security)."""
    with scoped(pool, Scope.for_user("acme", "auditor", frozenset({REVIEWER}))) as conn:
        row = conn.execute(sql, params).fetchone()
    assert row is not None
    return int(row["n"])


def _request(approvals: Approvals, order: str = "8842-B", org: str = "acme") -> str:
    view = approvals.request(
        org_id=org, user_id="dana", order_id=order, amount="249.00", reason="charged twice"
    )
    return view.id


def test_a_request_waits_at_the_review_gate_with_a_typed_payload(approvals: Approvals) -> None:
    workflow_id = _request(approvals)
    view = approvals.show(workflow_id, org_id="acme")
    assert view.state is WorkflowState.SUBMITTED_FOR_REVIEW
    assert view.workflow.state is WorkflowState.SUBMITTED_FOR_REVIEW
    assert view.awaiting_review
    assert view.next_steps == ["review"]
    assert [a.transition for a in view.audit] == ["create", "submit"]
    assert view.refunds == []
    snapshot = _state(approvals, approvals.config_for(workflow_id, org_id="acme"))
    payload = snapshot.interrupts[0].value
    assert payload["workflow_id"] == workflow_id
    assert payload["request"] == {
        "order_id": "8842-B",
        "amount": "249.00",
        "currency": "USD",
        "reason": "charged twice",
    }
    assert payload["owner"] == {"org_id": "acme", "user_id": "dana"}
    assert payload["allowed_decisions"] == ["approve", "reject"]
    assert payload["response_schema"]["required"] == ["decision", "by"]
    assert payload["error"] is None


def test_approval_executes_the_refund_once_and_history_shows_each_transition(
    approvals: Approvals, pool: ConnectionPool[Any]
) -> None:
    workflow_id = _request(approvals)
    view = approvals.approve(workflow_id, org_id="acme", by="maria", note="duplicate charge")
    assert view.state is WorkflowState.COMPLETED
    assert view.workflow.decided_by == "maria"
    assert view.workflow.decision_note == "duplicate charge"
    assert view.workflow.decided_at is not None
    assert [a.transition for a in view.audit] == [
        "create",
        "submit",
        "approve",
        "execute",
        "complete",
    ]
    assert len(view.refunds) == 1
    assert str(view.refunds[0].amount) == "249.00"
    assert view.refunds[0].approved_by == "maria"
    assert approvals.history(workflow_id, org_id="acme") == [
        "draft",
        "submitted_for_review",
        "approved",
        "executing",
        "completed",
    ]
    state = _state(approvals, approvals.config_for(workflow_id, org_id="acme")).values
    assert state["decision"]["by"] == "maria"
    assert state["decision"]["note"] == "duplicate charge"
    assert state["execution"]["outcome"] == "applied"
    assert [e["to_state"] for e in state["audit"]][-1] == "completed"
    assert (
        _count(pool, "SELECT count(*) AS n FROM refunds WHERE workflow_id = %s", workflow_id) == 1
    )


def test_rejection_keeps_who_when_and_why_and_pays_nothing(
    approvals: Approvals, pool: ConnectionPool[Any]
) -> None:
    workflow_id = _request(approvals)
    view = approvals.reject(workflow_id, org_id="acme", by="maria", reason="not a duplicate")
    assert view.state is WorkflowState.REJECTED
    assert not view.awaiting_review
    assert view.next_steps == []
    assert view.workflow.decision is not None
    assert view.workflow.decision.value == "reject"
    assert view.workflow.decision_note == "not a duplicate"
    assert view.audit[-1].transition == "reject"
    assert view.audit[-1].actor == "maria"
    assert view.audit[-1].note == "not a duplicate"
    assert view.refunds == []
    assert _count(pool, "SELECT count(*) AS n FROM refunds") == 0


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ({"decision": "maybe", "by": "maria"}, "decision"),
        ({"decision": "approve"}, "by: Field required"),
        ({"decision": "approve", "by": "   "}, "by: String should have at least 1 character"),
        ({"decision": "reject", "by": "maria"}, "a rejection needs a reason"),
        ({"decision": "approve", "by": "maria", "amount": "999"}, "amount: Extra inputs"),
    ],
)
def test_invalid_decisions_are_refused_clearly_and_change_nothing(
    approvals: Approvals, answer: dict[str, Any], message: str
) -> None:
    workflow_id = _request(approvals)
    before = _state(approvals, approvals.config_for(workflow_id, org_id="acme"))
    with pytest.raises(InvalidDecisionError, match=message) as caught:
        approvals.decide(workflow_id, answer, org_id="acme")
    assert "nothing was changed" in str(caught.value)
    after = _state(approvals, approvals.config_for(workflow_id, org_id="acme"))
    assert after.config == before.config
    assert approvals.show(workflow_id, org_id="acme").state is WorkflowState.SUBMITTED_FOR_REVIEW


def test_an_invalid_resume_sent_straight_to_the_graph_asks_again_with_the_reason(
    approvals: Approvals,
) -> None:
    """What a client of the HTTP API sees: the gate re-opens with `error` set."""
    workflow_id = _request(approvals)
    config = approvals.config_for(workflow_id, org_id="acme")
    result = approvals.graph.invoke(
        Command(resume={"decision": "approve", "by": ""}),
        config,
        context=Context(org_id="acme", user_id="maria", permissions=("reviewer",)),
    )
    assert result["workflow_state"] == "submitted_for_review"
    payload = result["__interrupt__"][0].value
    assert payload["error"].startswith("invalid decision: by:")
    view = approvals.show(workflow_id, org_id="acme")
    assert view.workflow.state is WorkflowState.SUBMITTED_FOR_REVIEW
    assert view.review_error == payload["error"]
    final = approvals.approve(workflow_id, org_id="acme", by="maria")
    assert final.state is WorkflowState.COMPLETED
    assert len(final.refunds) == 1


def test_approving_twice_is_refused_and_names_the_first_decision(approvals: Approvals) -> None:
    workflow_id = _request(approvals)
    approvals.approve(workflow_id, org_id="acme", by="maria")
    with pytest.raises(
        DecisionRefusedError, match=r"approved by maria at .* a decision is made once"
    ):
        approvals.approve(workflow_id, org_id="acme", by="omar")
    with pytest.raises(DecisionRefusedError, match="no longer awaiting review"):
        approvals.reject(workflow_id, org_id="acme", by="omar", reason="too late")
    # Resuming the finished graph directly (as an HTTP client could) changes nothing either.
    replay = approvals.graph.invoke(
        Command(resume={"decision": "approve", "by": "omar"}),
        approvals.config_for(workflow_id, org_id="acme"),
        context=Context(org_id="acme", user_id="omar", permissions=("reviewer",)),
    )
    assert replay["workflow_state"] == "completed"
    assert replay["decision"]["by"] == "maria"
    view = approvals.show(workflow_id, org_id="acme")
    assert view.workflow.decided_by == "maria"
    assert len(view.refunds) == 1


def test_a_reviewer_of_another_org_is_refused(approvals: Approvals) -> None:
    workflow_id = _request(approvals, org="acme")
    with pytest.raises(WorkflowNotFoundError, match="in organisation 'globex'"):
        approvals.approve(workflow_id, org_id="globex", by="mallory")
    with pytest.raises(WorkflowNotFoundError):
        approvals.show(workflow_id, org_id="globex")
    assert approvals.workflows(org_id="globex") == []
    # Resuming the graph directly does not reach it either: as mallory, even with the reviewer
    # permission, the workflow's checkpoints are not there (row-level security).
    mallory = Scope.for_user("globex", "mallory", frozenset({REVIEWER}))
    with acting_as(mallory):
        seen = approvals.graph.get_state(approvals.config_for(workflow_id, org_id="acme"))
    assert seen.values == {}
    assert approvals.show(workflow_id, org_id="acme").refunds == []


def test_a_requester_cannot_approve_their_own_refund(approvals: Approvals) -> None:
    workflow_id = _request(approvals)
    with pytest.raises(DecisionRefusedError, match="'dana' asked for this refund"):
        approvals.approve(workflow_id, org_id="acme", by="dana")
    view = approvals.show(workflow_id, org_id="acme")
    assert view.state is WorkflowState.SUBMITTED_FOR_REVIEW
    assert view.awaiting_review


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"amount": "0"}, "amount: Input should be greater than 0"),
        ({"amount": "12.345"}, "amount: Decimal input should have no more than 2 decimal places"),
        ({"amount": "lots"}, "amount"),
        ({"order_id": "  "}, "order_id: String should have at least 1 character"),
        ({"reason": ""}, "reason"),
    ],
)
def test_an_invalid_request_is_refused_and_creates_nothing(
    approvals: Approvals, pool: ConnectionPool[Any], fields: dict[str, str], message: str
) -> None:
    args = {"order_id": "1", "amount": "10", "reason": "late", **fields}
    with pytest.raises(InvalidRequestError, match=message):
        approvals.request(org_id="acme", user_id="dana", **args)
    assert _count(pool, "SELECT count(*) AS n FROM approval_workflows") == 0
    assert _count(pool, "SELECT count(*) AS n FROM checkpoints") == 0


def test_a_second_refund_of_the_same_order_fails_instead_of_paying_twice(
    approvals: Approvals, pool: ConnectionPool[Any]
) -> None:
    first = _request(approvals, order="77")
    approvals.approve(first, org_id="acme", by="maria")
    second = _request(approvals, order="77")  # the first is finished: a new workflow
    assert second != first
    view = approvals.approve(second, org_id="acme", by="maria")
    assert view.state is WorkflowState.FAILED
    assert view.refunds == []
    assert view.audit[-1].transition == "fail"
    assert f"already refunded by workflow {first}" in (view.audit[-1].note or "")
    assert _count(pool, "SELECT count(*) AS n FROM refunds WHERE order_id = '77'") == 1


def test_re_running_execute_after_the_effect_committed_pays_nothing_more(
    approvals: Approvals, pool: ConnectionPool[Any]
) -> None:
    """Replays the crash window: the refund committed, the checkpoint still `executing`."""
    workflow_id = _request(approvals)
    approvals.approve(workflow_id, org_id="acme", by="maria")
    config = approvals.config_for(workflow_id, org_id="acme")
    executing = next(
        s for s in _history(approvals, config) if s.values.get("workflow_state") == "executing"
    )
    replay = approvals.graph.invoke(
        None, executing.config, context=Context(org_id="acme", user_id="dana")
    )
    assert replay["workflow_state"] == "completed"
    assert replay["execution"]["outcome"] == "applied"
    assert "applied before this retry" in replay["audit"][-1]["note"]
    assert _count(pool, "SELECT count(*) AS n FROM refunds") == 1


def test_listing_filters_by_state_and_requester(approvals: Approvals) -> None:
    done = _request(approvals, order="1")
    waiting = _request(approvals, order="2")
    approvals.approve(done, org_id="acme", by="maria")
    other = approvals.request(
        org_id="acme", user_id="omar", order_id="3", amount=5, reason="broken"
    )
    assert [w.id for w in approvals.workflows(org_id="acme")] == [done, waiting, other.id]
    pending = approvals.workflows(org_id="acme", state="submitted_for_review")
    assert [w.id for w in pending] == [waiting, other.id]
    assert [w.id for w in approvals.workflows(org_id="acme", user_id="omar")] == [other.id]
    with pytest.raises(ValueError, match="'pending' is not a valid WorkflowState"):
        approvals.workflows(org_id="acme", state="pending")


def test_a_workflow_started_on_any_thread_is_found_and_approved_by_its_thread(
    approvals: Approvals, pool: ConnectionPool[Any]
) -> None:
    """As over the HTTP API, where the server names the thread: the thread id is the id."""
    with use_pool(pool):
        started = approvals.graph.invoke(
            {"request": {"order_id": "9", "amount": 12, "reason": "broken"}},
            {"configurable": {"thread_id": "3f0c9a52-studio"}},
            context=Context(org_id="acme", user_id="dana"),
        )
    assert started["workflow_id"] == "3f0c9a52-studio"
    view = approvals.approve("3f0c9a52-studio", org_id="acme", by="maria")
    assert view.workflow.thread_id == "3f0c9a52-studio"
    assert view.state is WorkflowState.COMPLETED
    assert len(view.refunds) == 1


def test_a_second_reviewer_deciding_at_the_same_moment_is_turned_away(
    approvals: Approvals, pool: ConnectionPool[Any]
) -> None:
    workflow_id = _request(approvals)
    with pool.connection() as other_reviewer:
        other_reviewer.execute(
            "SELECT pg_advisory_lock(%s, hashtext(%s))", (DECISION_LOCK_CLASS, workflow_id)
        )
        with pytest.raises(DecisionRefusedError, match="another reviewer is deciding"):
            approvals.approve(workflow_id, org_id="acme", by="omar")
        other_reviewer.execute(
            "SELECT pg_advisory_unlock(%s, hashtext(%s))", (DECISION_LOCK_CLASS, workflow_id)
        )
    assert approvals.show(workflow_id, org_id="acme").awaiting_review
    assert approvals.approve(workflow_id, org_id="acme", by="omar").state is WorkflowState.COMPLETED


def test_starting_a_second_workflow_on_a_used_thread_is_refused(approvals: Approvals) -> None:
    workflow_id = _request(approvals)
    approvals.reject(workflow_id, org_id="acme", by="maria", reason="no")
    with pytest.raises(InvalidRequestError, match="already holds workflow"):
        approvals.graph.invoke(
            {"request": {"order_id": "2", "amount": 1, "reason": "again"}},
            approvals.config_for(workflow_id, org_id="acme"),
            context=Context(org_id="acme", user_id="dana"),
        )
    assert approvals.show(workflow_id, org_id="acme").state is WorkflowState.REJECTED


def test_an_invalid_request_sent_straight_to_the_graph_fails_the_run_and_records_nothing(
    approvals: Approvals, pool: ConnectionPool[Any]
) -> None:
    """What a client of the HTTP API sees: the run errors with the field that is wrong."""
    with pytest.raises(InvalidRequestError, match="invalid refund request: amount: Input should"):
        approvals.graph.invoke(
            {"request": {"order_id": "9", "amount": "-1", "reason": "x"}},
            {"configurable": {"thread_id": "bad-request"}},
            context=Context(org_id="acme", user_id="dana"),
        )
    assert _count(pool, "SELECT count(*) AS n FROM approval_workflows") == 0
    assert _count(pool, "SELECT count(*) AS n FROM approval_audit") == 0


def test_repeating_a_request_for_an_unfinished_order_returns_the_same_workflow(
    approvals: Approvals, pool: ConnectionPool[Any]
) -> None:
    first = approvals.request(
        org_id="acme", user_id="dana", order_id="5", amount="10", reason="late"
    )
    again = approvals.request(
        org_id="acme", user_id="dana", order_id=" 5 ", amount="10", reason="late, again"
    )
    assert not first.reused
    assert again.reused
    assert again.id == first.id
    assert _count(pool, "SELECT count(*) AS n FROM approval_workflows") == 1
    other_user = approvals.request(
        org_id="acme", user_id="omar", order_id="5", amount="10", reason="mine"
    )
    assert other_user.id != first.id
    approvals.reject(first.id, org_id="acme", by="maria", reason="no")
    after_rejection = approvals.request(
        org_id="acme", user_id="dana", order_id="5", amount="10", reason="please reconsider"
    )
    assert not after_rejection.reused
    assert after_rejection.id != first.id


def test_a_run_stopped_between_steps_is_listed_as_stalled_and_resumed_to_the_gate(
    approvals: Approvals,
) -> None:
    """`interrupt_after` stops the run after `draft` as a crash would."""
    approvals.graph.invoke(
        {"request": {"order_id": "4", "amount": "8", "reason": "lost"}},
        {"configurable": {"thread_id": "approval-stopped01"}},
        context=Context(org_id="acme", user_id="dana"),
        interrupt_after=["draft"],
    )
    assert approvals.stalled(org_id="acme") == ["stopped01"]
    assert approvals.show("stopped01", org_id="acme").next_steps == ["submit"]
    view = approvals.resume("stopped01", org_id="acme")
    assert view.state is WorkflowState.SUBMITTED_FOR_REVIEW
    assert view.awaiting_review
    assert approvals.stalled(org_id="acme") == []
    assert approvals.resume("stopped01", org_id="acme").awaiting_review  # a no-op at the gate
