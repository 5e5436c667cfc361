"""What follows the reply that ends a turn, for hosts that are not this template's graph
(`MemoryMiddleware`, `MemoryHooks`): the summary fold when one is due, then the extraction
enqueue. The template's graph runs the same two as its `summarize` and `extract` steps."""

from __future__ import annotations

from typing import Any, cast

from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from recollect.prebuilt.extract import aextract, extract
from recollect.prebuilt.summarize import asummarize, summarize
from recollect.state.agent_state import AgentState
from recollect.state.context import Context


def reply_ends_turn(state: AgentState) -> bool:
    """The newest message is a reply with no tool call left to run."""
    messages = state.get("messages", [])
    return bool(messages) and isinstance(messages[-1], AIMessage) and not messages[-1].tool_calls


def finish_turn(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Fold (if due) and queue the turn; nothing while tool calls are still to run."""
    if not reply_ends_turn(state):
        return {}
    folded = summarize(state, runtime)
    after = cast(AgentState, {**state, **folded})  # the fold's fields replace, not merge
    return {**folded, **extract(after, runtime)}


async def afinish_turn(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The async twin: the fold's model call runs in a thread, the enqueue is awaited."""
    if not reply_ends_turn(state):
        return {}
    folded = await asummarize(state, runtime)
    after = cast(AgentState, {**state, **folded})
    return {**folded, **await aextract(after, runtime)}
