"""The orchestrator's reducers under real concurrency: branches of different lengths write
facts and results in the same and in different super-steps; all survive, duplicates merge."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send

from state.orchestrator import (
    OrchestratorState,
    SourcedFact,
    WorkerResult,
    merge_facts,
    merge_results,
)


def fact(text: str, worker: str, source: str, round_: int = 1, learned: bool = True) -> SourcedFact:
    return SourcedFact(round=round_, text=text, sources=[source], workers=[worker], learned=learned)


def result(worker: str, round_: int = 1, summary: str = "") -> WorkerResult:
    return WorkerResult(
        round=round_,
        worker_id=worker,
        task=f"task of {worker}",
        summary=summary or f"summary of {worker}",
        facts=[],
        open_questions=[],
        context_tokens=10,
        steps=1,
    )


def branch_graph(lengths: dict[str, int]) -> Any:
    """Each branch is a chain of `length` steps; every step writes a fact, a result, a note and
    a blackboard post, and one fact ("Budget is 1200 EUR") is written by every branch."""
    builder: StateGraph[OrchestratorState, None, OrchestratorState, OrchestratorState]
    builder = StateGraph(OrchestratorState)

    def start(_state: OrchestratorState) -> dict[str, Any]:
        return {"round": 1}

    def step(payload: dict[str, Any]) -> Any:
        worker, n, left = payload["worker"], payload["n"], payload["left"]
        update: dict[str, Any] = {
            "facts": [
                fact(f"{worker} found item {n}", worker, f"t{n}"),
                fact(
                    "Budget is 1200 EUR" if n % 2 else "budget is 1200 eur.", worker, f"{worker}-b"
                ),
            ],
            "results": [result(worker, summary=f"{worker} after step {n}")],
            "notes": {worker: {"step": str(n)}},
            "blackboard": {f"{worker}.last": str(n)},
            "context_tokens": {f"worker:{worker}": n},
        }
        if left > 1:
            from langgraph.types import Command

            return Command(
                update=update, goto=[Send("step", {"worker": worker, "n": n + 1, "left": left - 1})]
            )
        return update

    builder.add_node("start", start)
    builder.add_node("step", step)  # type: ignore[arg-type]
    builder.add_edge(START, "start")
    builder.add_conditional_edges(
        "start",
        lambda _s: [Send("step", {"worker": w, "n": 1, "left": k}) for w, k in lengths.items()],
        ["step"],
    )
    builder.add_edge("step", END)
    return builder.compile()


@pytest.mark.parametrize(
    "lengths", [{"w1": 1, "w2": 3, "w3": 2}, {f"w{i}": i for i in range(1, 9)}]
)
def test_concurrent_branches_of_different_lengths_lose_nothing(lengths: dict[str, int]) -> None:
    final = branch_graph(lengths).invoke({"task": "t"})
    texts = [f["text"] for f in final["facts"]]
    expected = {f"{w} found item {n}" for w, k in lengths.items() for n in range(1, k + 1)}
    assert expected <= set(texts)
    budget = [f for f in final["facts"] if f["text"].casefold().startswith("budget")]
    assert len(budget) == 1, "the fact every branch wrote is merged into one"
    assert set(budget[0]["workers"]) == set(lengths)
    assert set(budget[0]["sources"]) == {f"{w}-b" for w in lengths}
    assert len(texts) == len(expected) + 1
    assert [r["worker_id"] for r in final["results"]] == sorted(lengths)
    assert all(r["summary"] == f"{r['worker_id']} after step {lengths[r['worker_id']]}"
               for r in final["results"])  # fmt: skip
    assert final["notes"] == {w: {"step": str(k)} for w, k in lengths.items()}
    assert {k: v for k, v in final["blackboard"].items()} == {
        f"{w}.last": str(k) for w, k in lengths.items()
    }
    assert final["context_tokens"] == {f"worker:{w}": k for w, k in lengths.items()}


def test_a_new_round_replaces_the_old_rounds_results_and_facts() -> None:
    old = merge_results([result("w1"), result("w2")], [])
    assert merge_results(old, [result("w1", round_=2)]) == [result("w1", round_=2)]
    facts = merge_facts([fact("a", "w1", "t1")], [fact("b", "w2", "t2", round_=2)])
    assert [f["text"] for f in facts] == ["b"]


def test_duplicate_merge_keeps_learned_and_first_wording() -> None:
    merged = merge_facts(
        [fact("Offsite is in Lisbon.", "w1", "memory:1", learned=False)],
        [fact("offsite  is in lisbon", "w2", "board:venue", learned=True)],
    )
    assert len(merged) == 1
    assert merged[0]["text"] == "Offsite is in Lisbon."
    assert merged[0]["learned"] is True
    assert merged[0]["sources"] == ["memory:1", "board:venue"]


def test_a_plain_list_field_would_have_failed() -> None:
    """The test can fail: without the reducer, two branches in one step raise."""
    from typing import TypedDict

    from langgraph.errors import InvalidUpdateError

    class Plain(TypedDict, total=False):
        facts: list[str]

    builder: StateGraph[Plain, None, Plain, Plain] = StateGraph(Plain)
    builder.add_node("a", lambda _s: {"facts": ["a"]})
    builder.add_node("b", lambda _s: {"facts": ["b"]})
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    with pytest.raises(InvalidUpdateError):
        builder.compile().invoke({"facts": []})
