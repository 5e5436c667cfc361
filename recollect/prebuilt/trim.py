"""Keep the newest messages within the history budget; move the rest out of `messages`.

Deleting with `RemoveMessage` shrinks the persisted list, not only the prompt, so a long
thread's checkpoints stay small. Messages that leave the window go to `unfolded`, where the
summarize node folds them into the running summary; nothing leaves state unsummarised.

A cut goes down to `LOW_WATER` of the budget, not just under it: between cuts the history
only grows at its end, so consecutive prompts share their prefix (billed cheaper by providers
that cache prompts), and the summary, folded from what a cut removed, changes with it.

Pinning happens here, first: trim is the only node that drops or cuts checkpointed messages,
so lifting exact values out of every human and tool message before the window is computed
guarantees that no value is lost to trimming or truncation, whatever else the graph wires
before this node.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage, RemoveMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.runtime import Runtime

from recollect.history.pinning import eviction_note, pin_change, unscanned
from recollect.history.window import close_dangling_calls, fit_window
from recollect.prebuilt.run_context import context_of
from recollect.prebuilt.trace import note_trim
from recollect.state.agent_state import AgentState
from recollect.state.context import Context

LOW_WATER = 0.3
"""When the history overflows its budget it is cut down to this share of it, so the prompt's
prefix (history and summary alike) stays the same for several turns until the next cut."""


def trim(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Pin new values, close dangling tool calls, then remove (by id) what fell out of the
    window and cut what is huge; what a cut leaves out goes on to the fold as excerpts."""
    original = list(state.get("messages", []))
    update: dict[str, Any] = {}
    pins = pin_change(state.get("pinned"), unscanned(original, state.get("pinned_through")))
    if pins.update:
        update["pinned"] = pins.update
    if original and original[-1].id:
        update["pinned_through"] = original[-1].id
    note = eviction_note(pins.evicted, original[-1].id if original else None)
    if note is not None:
        update["unpinned"] = len(pins.evicted)
    messages = close_dangling_calls(original)
    repaired = [m.id for m in messages] != [m.id for m in original]
    budget = context_of(runtime).max_history_tokens
    window = fit_window(messages, budget)
    if window.dropped:  # cut in a chunk, down to the low-water mark, not a turn at a time
        window = fit_window(messages, budget, int(budget * LOW_WATER))
    changes: list[BaseMessage]
    if repaired:
        # A closing result must sit right after its call, which an append cannot do: the
        # list is rewritten (rare: only after a failed tool or an interrupted run).
        changes = [RemoveMessage(id=REMOVE_ALL_MESSAGES), *window.kept]
    else:
        changes = [RemoveMessage(id=m.id) for m in window.dropped if m.id]
        truncated = set(window.truncated_ids)
        changes += [m for m in window.kept if m.id in truncated]
    if changes:
        update["messages"] = changes
    note_trim(state, window.dropped, window.truncated_ids)
    leaving = [*window.dropped, *window.excerpts, *([note] if note is not None else [])]
    if leaving:
        update["unfolded"] = [*state.get("unfolded", []), *leaving]
    return update


async def atrim(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The async twin: trim is a little CPU and no I/O, so it runs on the caller's loop."""
    return trim(state, runtime)
