"""Combine the workers' distilled results into the answer.

The orchestrator's prompt is the task plus one short section per worker (its capped summary,
its sourced facts, its open questions): bounded by the number of workers times the handoff
cap, whatever the workers read or did.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.runtime import Runtime

from recollect import Context, chat_model, context_of
from recollect.delegation.handoff import render_handoff
from recollect.delegation.records import Handoff, HandoffFact
from recollect.engine import message_tokens
from state.orchestrator import OrchestratorState, WorkerResult

SYNTHESIS_PROMPT = """Several researchers each handled one part of the user's task; their \
results are below, with the sources of each fact in square brackets. Answer the task from \
these results only: keep every number exactly as given, and say what is still open."""


def as_handoff(result: WorkerResult) -> Handoff:
    """A checkpointed result, back in the form the handoff renderer reads."""
    return Handoff(
        summary=result["summary"],
        facts=tuple(
            HandoffFact(text=f["text"], sources=tuple(f["sources"]), learned=f["learned"])
            for f in result["facts"]
        ),
        open_questions=tuple(result["open_questions"]),
    )


def synthesis_messages(
    task: str, results: list[WorkerResult]
) -> list[SystemMessage | HumanMessage]:
    """The orchestrator's whole context: instructions, one section per worker, the task."""
    sections = [
        f"## Worker {r['worker_id']}: {r['task']}\n{render_handoff(as_handoff(r)) or '(nothing)'}"
        for r in results
    ]
    system = "\n\n".join([SYNTHESIS_PROMPT, *sections])
    return [SystemMessage(content=system), HumanMessage(content=task)]


def synthesise(state: OrchestratorState, runtime: Runtime[Context]) -> dict[str, Any]:
    """One model call over the handoffs; records what the orchestrator's context cost."""
    ctx = context_of(runtime)
    round_ = state.get("round", 0)
    results = [r for r in state.get("results", []) if r["round"] == round_]
    messages = synthesis_messages(state.get("task", ""), results)
    reply = chat_model(ctx.model).invoke(messages)
    return {
        "answer": reply.text,
        "context_tokens": {"orchestrator": message_tokens(messages)},
    }
