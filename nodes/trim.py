"""Keep the newest messages within the history budget; move the rest out of `messages`.

Deleting with `RemoveMessage` shrinks the persisted list, not only the prompt, so a long
thread's checkpoints stay small. Messages that leave the window go to `unfolded`, where the
summarize node folds them into the running summary; nothing leaves state unsummarised.

Pinning happens here, first: trim is the only node that drops or cuts checkpointed messages,
so lifting exact values out of every human and tool message before the window is computed
guarantees that no value is lost to trimming or truncation, whatever else the graph wires
before this node.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage, RemoveMessage
from langgraph.runtime import Runtime

from nodes.context import context_of
from recollect.history.pinning import new_pins
from recollect.history.window import fit_window
from state.agent import AgentState
from state.context import Context


def trim(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Pin new values, then remove (by id) what fell out of the window and cut what is huge."""
    messages = list(state.get("messages", []))
    update: dict[str, Any] = {}
    pins = new_pins(state.get("pinned"), messages)
    if pins:
        update["pinned"] = pins
    window = fit_window(messages, context_of(runtime).max_history_tokens)
    changes: list[BaseMessage] = [RemoveMessage(id=m.id) for m in window.dropped if m.id]
    truncated = set(window.truncated_ids)
    changes += [m for m in window.kept if m.id in truncated]
    if changes:
        update["messages"] = changes
    if window.dropped:
        update["unfolded"] = [*state.get("unfolded", []), *window.dropped]
    return update
