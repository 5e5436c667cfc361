"""Run a conversation's queued extraction now: the `memory` graph's only step.

The server's own worker extracts every thread once its debounce passes; a client that wants
a conversation's facts at once (before showing them, say) runs this graph on it instead.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from langgraph.runtime import Runtime

from recollect import Context, context_of
from recollect.engine import Scope, Worker, shared_pool
from state.memory import MemoryRunState


def run_memory_job(state: MemoryRunState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Drain the thread's pending job(s), ignoring their idle timers; report each outcome.
    Only the caller's own jobs: another user's thread id drains nothing."""
    ctx = context_of(runtime)
    outcomes = Worker(shared_pool()).drain(
        thread_id=state["thread_id"],
        ignore_debounce=True,
        scope=Scope.for_user(ctx.org_id, ctx.user_id),
    )
    return {"outcomes": [asdict(outcome) for outcome in outcomes]}
