"""The approval state machine: the table is checked when it is built, and `next_state` is pure."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphs.approval import NEXT_STEP
from recollect.approvals.machine import (
    APPROVAL_TRANSITIONS,
    TERMINAL_STATES,
    Decision,
    GuardContext,
    Outcome,
    Transition,
    TransitionTable,
    TransitionTableError,
    WorkflowState,
    all_contexts,
)

S = WorkflowState


def _always(_ctx: GuardContext) -> bool:
    return True


def _decided(ctx: GuardContext) -> bool:
    return ctx.decision is not None


def _approved(ctx: GuardContext) -> bool:
    return ctx.decision is Decision.APPROVE


def _never(_ctx: GuardContext) -> bool:
    return False


def _rest() -> list[Transition]:
    """Valid transitions for every state except submitted_for_review."""
    return [
        Transition(S.DRAFT, S.SUBMITTED_FOR_REVIEW, _always, "submit"),
        Transition(S.APPROVED, S.EXECUTING, _always, "execute"),
        Transition(S.EXECUTING, S.COMPLETED, lambda c: c.outcome is Outcome.APPLIED, "complete"),
        Transition(S.EXECUTING, S.FAILED, lambda c: c.outcome is Outcome.FAILED, "fail"),
    ]


def test_the_shipped_table_walks_the_happy_and_unhappy_paths() -> None:
    table = APPROVAL_TRANSITIONS
    valid = GuardContext(request_valid=True)
    assert table.next_state(S.DRAFT, valid).to_state is S.SUBMITTED_FOR_REVIEW  # type: ignore[union-attr]
    assert table.next_state(S.DRAFT, GuardContext()) is None
    assert table.next_state(S.SUBMITTED_FOR_REVIEW, valid) is None  # awaits a decision
    approve = GuardContext(request_valid=True, decision=Decision.APPROVE)
    reject = GuardContext(request_valid=True, decision=Decision.REJECT)
    assert table.next_state(S.SUBMITTED_FOR_REVIEW, approve).name == "approve"  # type: ignore[union-attr]
    assert table.next_state(S.SUBMITTED_FOR_REVIEW, reject).name == "reject"  # type: ignore[union-attr]
    assert table.next_state(S.APPROVED, approve).to_state is S.EXECUTING  # type: ignore[union-attr]
    applied = GuardContext(request_valid=True, decision=Decision.APPROVE, outcome=Outcome.APPLIED)
    failed = GuardContext(request_valid=True, decision=Decision.APPROVE, outcome=Outcome.FAILED)
    assert table.next_state(S.EXECUTING, applied).to_state is S.COMPLETED  # type: ignore[union-attr]
    assert table.next_state(S.EXECUTING, failed).to_state is S.FAILED  # type: ignore[union-attr]
    assert table.next_state(S.EXECUTING, approve) is None
    for terminal in TERMINAL_STATES:
        assert all(table.next_state(terminal, ctx) is None for ctx in all_contexts())


def test_an_ambiguous_table_is_rejected_at_construction() -> None:
    ambiguous = [
        *_rest(),
        Transition(S.SUBMITTED_FOR_REVIEW, S.APPROVED, _approved, "approve"),
        Transition(S.SUBMITTED_FOR_REVIEW, S.REJECTED, _decided, "reject"),
    ]
    with pytest.raises(
        TransitionTableError,
        match=r"ambiguous table: from 'submitted_for_review', "
        r"transitions \['approve', 'reject'\] can all fire",
    ):
        TransitionTable(ambiguous)


def test_an_unreachable_state_is_rejected() -> None:
    no_reject = [*_rest(), Transition(S.SUBMITTED_FOR_REVIEW, S.APPROVED, _approved, "approve")]
    with pytest.raises(TransitionTableError, match=r"unreachable from 'draft': \['rejected'\]"):
        TransitionTable(no_reject)


def test_a_terminal_state_with_exits_is_rejected() -> None:
    reopen = [
        *_rest(),
        Transition(S.SUBMITTED_FOR_REVIEW, S.APPROVED, _approved, "approve"),
        Transition(
            S.SUBMITTED_FOR_REVIEW, S.REJECTED, lambda c: c.decision is Decision.REJECT, "reject"
        ),
        Transition(S.REJECTED, S.DRAFT, _always, "reopen"),
    ]
    with pytest.raises(TransitionTableError, match="terminal state 'rejected' must have no exits"):
        TransitionTable(reopen)


def test_a_dead_end_a_dead_guard_and_duplicate_names_are_rejected() -> None:
    with pytest.raises(TransitionTableError, match="'submitted_for_review' is not terminal but"):
        TransitionTable(_rest())
    dead = [
        *_rest(),
        Transition(S.SUBMITTED_FOR_REVIEW, S.APPROVED, _approved, "approve"),
        Transition(S.SUBMITTED_FOR_REVIEW, S.REJECTED, _never, "reject"),
    ]
    with pytest.raises(TransitionTableError, match="'reject' can never fire"):
        TransitionTable(dead)
    twice = [*_rest(), Transition(S.SUBMITTED_FOR_REVIEW, S.APPROVED, _approved, "submit")]
    with pytest.raises(TransitionTableError, match=r"unique: \['submit'\]"):
        TransitionTable(twice)


def test_every_state_has_a_step_and_contexts_cover_every_field_value() -> None:
    assert set(NEXT_STEP) == set(WorkflowState)
    contexts = list(all_contexts())
    assert len(contexts) == 2 * 3 * 3
    assert {c.outcome for c in contexts} == {None, *Outcome}
    assert Decision.APPROVE.past == "approved"
    assert Decision.REJECT.past == "rejected"


_GUARDS = {
    "always": _always,
    "decided": _decided,
    "approved": _approved,
    "rejected": lambda c: c.decision is Decision.REJECT,
    "valid": lambda c: c.request_valid,
    "applied": lambda c: c.outcome is Outcome.APPLIED,
    "failed": lambda c: c.outcome is Outcome.FAILED,
}


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(list(WorkflowState)),
            st.sampled_from(list(WorkflowState)),
            st.sampled_from(sorted(_GUARDS)),
        ),
        max_size=10,
    )
)
def test_any_table_that_builds_is_unambiguous_reachable_and_closed(
    edges: list[tuple[WorkflowState, WorkflowState, str]],
) -> None:
    transitions = [Transition(a, b, _GUARDS[g], f"t{i}") for i, (a, b, g) in enumerate(edges)]
    try:
        table = TransitionTable(transitions)
    except TransitionTableError:
        return
    for state in WorkflowState:
        for ctx in all_contexts():
            assert sum(t.guard(ctx) for t in table.exits(state)) <= 1
        assert (state in TERMINAL_STATES) == (not table.exits(state))
    seen, frontier = {S.DRAFT}, [S.DRAFT]
    while frontier:
        for t in table.exits(frontier.pop()):
            if t.to_state not in seen:
                seen.add(t.to_state)
                frontier.append(t.to_state)
    assert seen == set(WorkflowState)


def test_the_approval_graph_describes_its_input_and_output_as_json_schema() -> None:
    """Studio's forms and the HTTP API's `/schemas` are built from these."""
    from graphs.approval import graph

    given_input = graph.get_input_jsonschema()
    assert given_input["required"] == ["request"]
    request = given_input["$defs"]["RefundRequestInput"]
    assert request["required"] == ["order_id", "amount", "reason"]
    output = graph.get_output_jsonschema()
    assert {"workflow_state", "decision", "audit"} <= set(output["properties"])


def test_the_graph_edges_follow_the_transition_table() -> None:
    from graphs.approval import graph

    edges = sorted((e.source, e.target) for e in graph.get_graph().edges)
    assert edges == [
        ("__start__", "draft"),
        ("draft", "submit"),
        ("execute", "__end__"),
        ("review", "__end__"),
        ("review", "review"),
        ("review", "start_execution"),
        ("start_execution", "execute"),
        ("submit", "review"),
    ]
