"""Keep the newest messages within the history budget; delete the rest from the checkpoint.

Deleting with `RemoveMessage` shrinks the persisted list, not only the prompt, so a long
thread's checkpoints stay small.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import (
    AnyMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    trim_messages,
)
from langchain_core.messages.utils import count_tokens_approximately
from langgraph.runtime import Runtime

from recollect.nodes.context import context_of
from recollect.state.agent import AgentState
from recollect.state.context import Context


def kept_messages(messages: list[AnyMessage], max_tokens: int) -> list[BaseMessage]:
    """The verbatim tail to keep: system prompt, then a window that starts on a human turn."""
    kept: list[BaseMessage] = trim_messages(
        messages,
        max_tokens=max_tokens,
        token_counter=count_tokens_approximately,
        strategy="last",
        start_on="human",
        include_system=True,
        allow_partial=False,
    )
    if not any(isinstance(m, HumanMessage) for m in kept):
        last_human = max(
            (i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=None
        )
        if last_human is not None:
            system: list[BaseMessage] = [m for m in kept if m.type == "system"]
            kept = system + list(messages[last_human:])
    return kept


def trim(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Remove, by id, every message that fell out of the budgeted window."""
    messages = state.get("messages", [])
    budget = context_of(runtime).max_history_tokens
    keep_ids = {m.id for m in kept_messages(messages, budget)}
    removed = [RemoveMessage(id=m.id) for m in messages if m.id and m.id not in keep_ids]
    return {"messages": removed} if removed else {}
