"""Queue the turn for the background memory job; the reply never waits for extraction.

The node's only work is one short transaction: buffer the thread's new messages and
(re)schedule its debounced job. The worker (`recollect worker`, the CLI's background thread,
or the `memory` graph on LangGraph Platform) does the extraction later.
"""

from __future__ import annotations

import logging
from typing import Any

from langchain_core.messages import AnyMessage
from langgraph.runtime import Runtime

from nodes.context import context_of
from nodes.queue_for_extraction import queue_for_extraction, run_thread_id
from nodes.trace import record_turn
from recollect.extraction.queue import BufferedMessage, QueueUnavailableError
from recollect.store.offload import offloaded
from state.agent import AgentState
from state.context import Context

_ROLES = {"human": "user", "ai": "assistant"}
log = logging.getLogger(__name__)


def extract(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Record a job for this thread; threadless (stateless) runs have nothing to come back to."""
    ctx = context_of(runtime)
    thread_id = run_thread_id()
    record_turn(state, ctx)
    if not ctx.extraction or not thread_id:
        return {}
    # `unfolded` too: a message trimmed in this very turn (or whose middle was cut, kept as
    # excerpts) would otherwise never reach extraction; the queue skips ids it has seen.
    messages = buffered([*state.get("unfolded", []), *state.get("messages", [])])
    if not messages:
        return {}
    try:
        queue_for_extraction(ctx, thread_id, messages)
    except QueueUnavailableError as exc:
        # The reply stands; the next turn re-sends these messages, so nothing is lost.
        log.warning("%s; the next turn will queue these messages again", exc)
    return {}


async def aextract(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The async twin: the queue's one transaction runs on the bounded executor."""
    return await offloaded(extract, state, runtime)


def buffered(messages: list[AnyMessage]) -> list[BufferedMessage]:
    """User and assistant text with ids; tool traffic and system prompts are not facts."""
    return [
        BufferedMessage(str(m.id), _ROLES[m.type], m.text)
        for m in messages
        if m.type in _ROLES and m.id and m.text.strip()
    ]
