"""The approval state machine: states, guarded transitions, and a table checked when it is built.

Guards are pure functions of a small, finite `GuardContext`, so the table can be checked
exhaustively at construction: every context is tried against every state, which finds
ambiguity (two transitions that could both fire), unreachable states, terminal states with
exits and dead ends before a single workflow runs.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum


class WorkflowState(StrEnum):
    """Where a workflow stands; the subgraph routes on this and on nothing else."""

    DRAFT = "draft"
    SUBMITTED_FOR_REVIEW = "submitted_for_review"
    APPROVED = "approved"
    REJECTED = "rejected"
    EXECUTING = "executing"
    COMPLETED = "completed"
    FAILED = "failed"


TERMINAL_STATES: frozenset[WorkflowState] = frozenset(
    {WorkflowState.REJECTED, WorkflowState.COMPLETED, WorkflowState.FAILED}
)


class Decision(StrEnum):
    """What a reviewer may decide."""

    APPROVE = "approve"
    REJECT = "reject"

    @property
    def past(self) -> str:
        """ "approved" or "rejected", for messages."""
        return f"{self.value}d" if self is Decision.APPROVE else f"{self.value}ed"


class Outcome(StrEnum):
    """How the side effect ended."""

    APPLIED = "applied"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class GuardContext:
    """Everything a guard may look at; every field has a finite domain (see `all_contexts`)."""

    request_valid: bool = False
    decision: Decision | None = None
    outcome: Outcome | None = None


Guard = Callable[[GuardContext], bool]


@dataclass(frozen=True, slots=True)
class Transition:
    """One edge of the machine: it fires from `from_state` when `guard(context)` holds."""

    from_state: WorkflowState
    to_state: WorkflowState
    guard: Guard
    name: str


class TransitionTableError(ValueError):
    """A transition table that would make the machine ambiguous, unreachable or stuck."""


def all_contexts() -> Iterator[GuardContext]:
    """Every possible guard context (the product of each field's domain)."""
    for valid, decision, outcome in itertools.product(
        (False, True), (None, *Decision), (None, *Outcome)
    ):
        yield GuardContext(request_valid=valid, decision=decision, outcome=outcome)


class TransitionTable:
    """A checked set of transitions; `next_state` returns the single one that fires, or None."""

    def __init__(
        self,
        transitions: Iterable[Transition],
        *,
        initial: WorkflowState = WorkflowState.DRAFT,
        terminal: frozenset[WorkflowState] = TERMINAL_STATES,
    ) -> None:
        self.transitions: tuple[Transition, ...] = tuple(transitions)
        self.initial = initial
        self.terminal = terminal
        self._by_state: dict[WorkflowState, tuple[Transition, ...]] = {
            state: tuple(t for t in self.transitions if t.from_state is state)
            for state in WorkflowState
        }
        self._check_names()
        self._check_unambiguous()
        self._check_exits()
        self._check_reachable()

    def next_state(self, current: WorkflowState, ctx: GuardContext) -> Transition | None:
        """The transition that fires now, or None: the workflow awaits input."""
        firing = [t for t in self._by_state[current] if t.guard(ctx)]
        return firing[0] if firing else None

    def exits(self, state: WorkflowState) -> tuple[Transition, ...]:
        """Transitions leaving `state`, in table order."""
        return self._by_state[state]

    def _check_names(self) -> None:
        names = [t.name for t in self.transitions]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise TransitionTableError(f"transition names must be unique: {duplicates}")

    def _check_unambiguous(self) -> None:
        for state, exits in self._by_state.items():
            for ctx in all_contexts():
                firing = [t.name for t in exits if t.guard(ctx)]
                if len(firing) > 1:
                    raise TransitionTableError(
                        f"ambiguous table: from {state.value!r}, transitions {firing} can all "
                        f"fire for {ctx}; make their guards mutually exclusive"
                    )

    def _check_exits(self) -> None:
        for state, exits in self._by_state.items():
            if state in self.terminal and exits:
                names = [t.name for t in exits]
                raise TransitionTableError(
                    f"terminal state {state.value!r} must have no exits, has {names}"
                )
            if state not in self.terminal and not exits:
                raise TransitionTableError(
                    f"state {state.value!r} is not terminal but nothing leaves it"
                )
        for transition in self.transitions:
            if not any(transition.guard(ctx) for ctx in all_contexts()):
                raise TransitionTableError(
                    f"transition {transition.name!r} can never fire: its guard is always false"
                )

    def _check_reachable(self) -> None:
        seen = {self.initial}
        frontier = [self.initial]
        while frontier:
            state = frontier.pop()
            for transition in self._by_state[state]:
                if transition.to_state not in seen:
                    seen.add(transition.to_state)
                    frontier.append(transition.to_state)
        unreachable = sorted(s.value for s in WorkflowState if s not in seen)
        if unreachable:
            raise TransitionTableError(
                f"unreachable from {self.initial.value!r}: {unreachable}; add a transition or "
                "remove the state"
            )


def _request_valid(ctx: GuardContext) -> bool:
    return ctx.request_valid


def _approved(ctx: GuardContext) -> bool:
    return ctx.decision is Decision.APPROVE


def _rejected(ctx: GuardContext) -> bool:
    return ctx.decision is Decision.REJECT


def _not_started(ctx: GuardContext) -> bool:
    return ctx.outcome is None


def _applied(ctx: GuardContext) -> bool:
    return ctx.outcome is Outcome.APPLIED


def _effect_failed(ctx: GuardContext) -> bool:
    return ctx.outcome is Outcome.FAILED


APPROVAL_TRANSITIONS = TransitionTable(
    (
        Transition(
            WorkflowState.DRAFT, WorkflowState.SUBMITTED_FOR_REVIEW, _request_valid, "submit"
        ),
        Transition(
            WorkflowState.SUBMITTED_FOR_REVIEW, WorkflowState.APPROVED, _approved, "approve"
        ),
        Transition(WorkflowState.SUBMITTED_FOR_REVIEW, WorkflowState.REJECTED, _rejected, "reject"),
        Transition(WorkflowState.APPROVED, WorkflowState.EXECUTING, _not_started, "execute"),
        Transition(WorkflowState.EXECUTING, WorkflowState.COMPLETED, _applied, "complete"),
        Transition(WorkflowState.EXECUTING, WorkflowState.FAILED, _effect_failed, "fail"),
    )
)
"""The approval workflow: draft → submitted_for_review → approved | rejected;
approved → executing → completed | failed."""
