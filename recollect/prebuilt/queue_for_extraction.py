"""Buffer messages for the thread's debounced extraction job: what the agent's `extract` and
the orchestrator's `remember` both do at the end of a run."""

from __future__ import annotations

from collections.abc import Sequence

from langgraph.config import get_config

from recollect.extraction.queue import BufferedMessage, Debounce, aenqueue, enqueue
from recollect.models.factory import resolve_model_name
from recollect.state.context import Context
from recollect.store.apool import shared_async_pool
from recollect.store.pool import shared_pool
from recollect.store.scope import Scope


def run_thread_id() -> str | None:
    """The run's thread; threadless (stateless) runs have nothing to come back to."""
    thread_id = (get_config().get("configurable") or {}).get("thread_id")
    return str(thread_id) if thread_id else None


def queue_for_extraction(
    ctx: Context, thread_id: str, messages: Sequence[BufferedMessage], held: bool = False
) -> None:
    """One short transaction; raises `QueueUnavailableError` when the database is away.
    `held`: the checkpoint that commits the turn schedules the job (`extraction.queue`)."""
    enqueue(
        shared_pool(),
        Scope.for_user(ctx.org_id, ctx.user_id),
        thread_id,
        list(messages),
        debounce=Debounce(ctx.extract_after_idle_s, ctx.extract_every_turns),
        model=resolve_model_name(ctx.model),  # a worker without this model leaves the job
        min_confidence=ctx.min_confidence,
        held=held,
    )


async def aqueue_for_extraction(
    ctx: Context, thread_id: str, messages: Sequence[BufferedMessage], held: bool = False
) -> None:
    """The async twin: the same transaction, awaited on the loop's async pool."""
    await aenqueue(
        await shared_async_pool(),
        Scope.for_user(ctx.org_id, ctx.user_id),
        thread_id,
        list(messages),
        debounce=Debounce(ctx.extract_after_idle_s, ctx.extract_every_turns),
        model=resolve_model_name(ctx.model),
        min_confidence=ctx.min_confidence,
        held=held,
    )
