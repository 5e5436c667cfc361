"""Offer what the workers learned to long-term memory, through the chat turns' own path.

The round's task (what the user asked) and each learned fact (one citing something other than
long-term memory, with its sources) are buffered for the thread's debounced extraction job,
exactly as the agent's `extract` node buffers a turn: the background worker then extracts,
redacts, screens and validates them like any conversation, and low-confidence findings go to
review. Facts read back from long-term memory are not offered again.
"""

from __future__ import annotations

import logging
from typing import Any

from langgraph.runtime import Runtime

from recollect import Context, context_of
from recollect.engine import (
    WORKER_ROLE,
    BufferedMessage,
    Queued,
    QueueUnavailableError,
    aqueue_for_extraction,
    queue_for_extraction,
    run_thread_id,
)
from state.orchestrator import OrchestratorState, SourcedFact

log = logging.getLogger(__name__)


def buffered_findings(round_: int, task: str, facts: list[SourcedFact]) -> list[BufferedMessage]:
    """The task as the user's line, then one `worker` line per learned fact with sources."""
    lines = [BufferedMessage(f"r{round_}-task", "user", task)] if task.strip() else []
    learned = [f for f in facts if f["learned"] and f["round"] == round_]
    lines += [
        BufferedMessage(
            f"r{round_}-fact{n}", WORKER_ROLE, f"{f['text']} (sources: {', '.join(f['sources'])})"
        )
        for n, f in enumerate(learned, start=1)
    ]
    return lines


def _findings(state: OrchestratorState, runtime: Runtime[Context]) -> Queued | None:
    """What both forms queue: this round's task and learned facts (None: nothing to queue, or
    a threadless run, which has nothing to come back to)."""
    ctx = context_of(runtime)
    thread_id = run_thread_id()
    if not ctx.extraction or not thread_id:
        return None
    messages = buffered_findings(
        state.get("round", 0), state.get("task", ""), list(state.get("facts", []))
    )
    return Queued(ctx, thread_id, messages) if messages else None


def remember(state: OrchestratorState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Queue this round for extraction, in one short transaction."""
    queued = _findings(state, runtime)
    if queued is not None:
        try:
            queue_for_extraction(*queued)
        except QueueUnavailableError as exc:
            _unqueued(exc)
    return {}


async def aremember(state: OrchestratorState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The async twin: the same transaction, awaited on the loop's async pool."""
    queued = _findings(state, runtime)
    if queued is not None:
        try:
            await aqueue_for_extraction(*queued)
        except QueueUnavailableError as exc:
            _unqueued(exc)
    return {}


def _unqueued(exc: QueueUnavailableError) -> None:
    log.warning("%s; this round's findings are not offered to long-term memory", exc)
