"""The orchestrator's state: the plan, the shared blackboard, each worker's private notes and
the distilled results, each with a declared reducer.

Workers run concurrently (one `Send` each), so every field they write merges: two branches
writing in the same step never raise `InvalidUpdateError`, and a branch that finishes later
never overwrites one that finished earlier. Workers' messages are not here at all: each runs
in its own message list, and only its `WorkerResult` comes back.

Results and facts belong to one round (one task); a new plan starts a new round and the
reducers drop the older rounds' entries, so a thread's checkpoint does not grow with every
task it is given.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, ClassVar, NotRequired

from typing_extensions import TypedDict

from recollect import Context
from recollect.delegation.handoff import fact_key


class Subtask(TypedDict):
    """One worker's assignment: its id, what to find, and the blackboard keys it may read."""

    id: str
    task: str
    keys: list[str]


class SourcedFact(TypedDict):
    """A finding with the sources it was read from and the workers that reported it."""

    round: int
    text: str
    sources: list[str]
    workers: list[str]
    learned: bool
    """Cites something other than long-term memory: new, so offered to extraction."""


class WorkerResult(TypedDict):
    """All the orchestrator keeps of one worker: a capped summary, facts, open questions."""

    round: int
    worker_id: str
    task: str
    summary: str
    facts: list[SourcedFact]
    open_questions: list[str]
    context_tokens: int
    """The largest prompt this worker sent: its own context, never the orchestrator's."""
    steps: int


class WorkerInput(TypedDict):
    """What a `Send` hands one worker: its subtask and the slices of state it may see."""

    round: int
    subtask: Subtask
    blackboard: dict[str, str]
    notes: dict[str, str]


def _newest(round_of: list[int]) -> int:
    return max(round_of, default=0)


def merge_results(
    current: list[WorkerResult] | None, update: list[WorkerResult] | None
) -> list[WorkerResult]:
    """Every branch's result survives; a worker reporting twice in a round keeps its latest;
    results of older rounds are dropped once a newer round reports."""
    combined = [*(current or []), *(update or [])]
    newest = _newest([r["round"] for r in combined])
    by_worker: dict[str, WorkerResult] = {}
    for result in combined:
        if result["round"] == newest:
            by_worker[result["worker_id"]] = result
    return sorted(by_worker.values(), key=lambda r: r["worker_id"])


def merge_facts(
    current: list[SourcedFact] | None, update: list[SourcedFact] | None
) -> list[SourcedFact]:
    """Union of the newest round's facts; a duplicate merges into the first, keeping every
    source and every worker that found it."""
    combined = [*(current or []), *(update or [])]
    newest = _newest([f["round"] for f in combined])
    merged: dict[str, SourcedFact] = {}
    for fact in combined:
        if fact["round"] != newest:
            continue
        key = fact_key(fact["text"])
        old = merged.get(key)
        if old is None:
            merged[key] = SourcedFact(
                round=fact["round"],
                text=fact["text"],
                sources=list(dict.fromkeys(fact["sources"])),
                workers=list(dict.fromkeys(fact["workers"])),
                learned=fact["learned"],
            )
            continue
        old["sources"] = list(dict.fromkeys([*old["sources"], *fact["sources"]]))
        old["workers"] = list(dict.fromkeys([*old["workers"], *fact["workers"]]))
        old["learned"] = old["learned"] or fact["learned"]
    return list(merged.values())


def merge_blackboard(
    current: dict[str, str] | None, update: dict[str, str] | None
) -> dict[str, str]:
    """Newest value per key; a key is never dropped by a partial update. Workers post under
    their own prefix (`w1.…`), so two branches never race for one key."""
    return {**(current or {}), **(update or {})}


def merge_notes(
    current: dict[str, dict[str, str]] | None, update: dict[str, dict[str, str]] | None
) -> dict[str, dict[str, str]]:
    """Each worker's private notes replace only that worker's previous notes."""
    return {**(current or {}), **(update or {})}


def merge_counts(current: dict[str, int] | None, update: dict[str, int] | None) -> dict[str, int]:
    """Token counts per context (`orchestrator`, `worker:w1`, ...); newest per key."""
    return {**(current or {}), **(update or {})}


class OrchestratorInput(TypedDict):
    """What a caller sends: the task, and optionally shared facts for the blackboard."""

    task: str
    blackboard: NotRequired[Annotated[dict[str, str], merge_blackboard]]


class OrchestratorState(OrchestratorInput, total=False):
    """Everything an orchestrated thread carries between tasks."""

    round: int
    subtasks: list[Subtask]
    notes: Annotated[dict[str, dict[str, str]], merge_notes]
    """Private to each worker (keyed by worker id): a worker is only ever sent its own."""
    results: Annotated[list[WorkerResult], merge_results]
    facts: Annotated[list[SourcedFact], merge_facts]
    answer: str
    context_tokens: Annotated[dict[str, int], merge_counts]


class OrchestratorOutput(TypedDict, total=False):
    """What a run returns."""

    answer: str
    results: list[WorkerResult]
    facts: list[SourcedFact]
    context_tokens: dict[str, int]


@dataclass(kw_only=True)
class OrchestratorContext(Context):
    """The orchestrator's run settings: its model, its workers' budgets, and how a round's
    findings are queued for extraction."""

    offered_settings: ClassVar[frozenset[str] | None] = frozenset(
        {
            "model",
            "per_worker_tokens",
            "handoff_tokens",
            "max_workers",
            "worker_max_steps",
            "extraction",
            "min_confidence",
            "extract_after_idle_s",
            "extract_every_turns",
        }
    )
