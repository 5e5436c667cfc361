"""Queue the turn for the background memory job; the reply never waits for extraction.

The node's only work is one short transaction: buffer the thread's new messages (those after
`queued_through`, the newest an earlier turn queued) and (re)schedule its debounced job. The
worker (`recollect worker`, the CLI's background thread, or the `memory` graph on LangGraph
Platform) does the extraction later.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, NamedTuple

from langchain_core.messages import AnyMessage
from langgraph.config import get_config
from langgraph.runtime import Runtime

from recollect.extraction.queue import BufferedMessage, QueueUnavailableError
from recollect.history.turn_release import checkpointer_releases
from recollect.prebuilt.queue_for_extraction import (
    aqueue_for_extraction,
    queue_for_extraction,
    run_thread_id,
)
from recollect.prebuilt.run_context import context_of
from recollect.prebuilt.trace import record_turn
from recollect.state.agent_state import AgentState
from recollect.state.context import Context
from recollect.store.pool import open_shared_pool, shared_pool
from recollect.trace.settings import tracing_enabled

_ROLES = {"human": "user", "ai": "assistant"}
log = logging.getLogger(__name__)


class Queued(NamedTuple):
    """What one turn hands to the queue."""

    ctx: Context
    thread_id: str
    messages: list[BufferedMessage]
    held: bool = False
    """The turn's checkpointer releases the messages when it commits the turn."""


def _queued(state: AgentState, runtime: Runtime[Context]) -> Queued | None:
    """The plain part of both forms: submit the turn's trace, and say what to queue (None:
    nothing, e.g. extraction off or a threadless run, which has nothing to come back to)."""
    ctx = context_of(runtime)
    thread_id = run_thread_id()
    record_turn(state, ctx)
    if not ctx.extraction or not thread_id:
        return None
    # `unfolded` too: a message trimmed in this very turn (or whose middle was cut, kept as
    # excerpts) would otherwise never reach extraction; the queue skips ids it has seen.
    messages = after_queued(
        buffered([*state.get("unfolded", []), *state.get("messages", [])]),
        state.get("queued_through"),
    )
    if not messages:
        return None
    return Queued(ctx, thread_id, messages, checkpointer_releases(get_config()))


def extract(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Record a job for this thread, in one short transaction."""
    queued = _queued(state, runtime)
    if queued is None:
        return {}
    try:
        queue_for_extraction(*queued)
    except QueueUnavailableError as exc:
        return _unqueued(exc)
    return _marked(queued)


async def aextract(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The async twin: the same transaction, awaited on the loop's async pool."""
    if tracing_enabled() and open_shared_pool() is None:  # the trace writer's pool opens once
        await asyncio.to_thread(shared_pool)
    queued = _queued(state, runtime)
    if queued is None:
        return {}
    try:
        await aqueue_for_extraction(*queued)
    except QueueUnavailableError as exc:
        return _unqueued(exc)
    return _marked(queued)


def after_queued(messages: list[BufferedMessage], through: str | None) -> list[BufferedMessage]:
    """The messages after `through`, the newest one an earlier turn queued; all of them when it
    is not among them (a thread older than the mark, or trimmed past it), which the queue's
    seen ids make safe."""
    ids = [m.message_id for m in messages]
    if through is None or through not in ids:
        return messages
    last = len(ids) - 1 - ids[::-1].index(through)  # a cut message is in `unfolded` and kept
    return messages[last + 1 :]


def _marked(queued: Queued) -> dict[str, Any]:
    """The state update after a successful enqueue: the newest message it sent."""
    return {"queued_through": queued.messages[-1].message_id}


def _unqueued(exc: QueueUnavailableError) -> dict[str, Any]:
    # The reply stands; the mark stays, so the next turn re-sends these messages.
    log.warning("%s; the next turn will queue these messages again", exc)
    return {}


def buffered(messages: list[AnyMessage]) -> list[BufferedMessage]:
    """User and assistant text with ids; tool traffic and system prompts are not facts."""
    return [
        BufferedMessage(str(m.id), _ROLES[m.type], m.text)
        for m in messages
        if m.type in _ROLES and m.id and m.text.strip()
    ]
