"""A turn's entry check: the new human messages must be within the size limits, so a run that
would fail fails with one line before any node, embedder or model runs."""

from __future__ import annotations

from langchain_core.messages import HumanMessage

from recollect.history.limits import check_message
from state.agent import AgentState


def check_new_messages(state: AgentState) -> None:
    """Check the human messages after the last reply; raises the limits' own error."""
    for message in reversed(state.get("messages", [])):
        if not isinstance(message, HumanMessage):
            break
        check_message(message.content)


def turn_starts(state: AgentState) -> bool:
    """Whether the next model call opens a turn (the newest message is the user's), rather
    than following a tool call: recall and trim run once a turn, before its first call."""
    messages = state.get("messages", [])
    return bool(messages) and isinstance(messages[-1], HumanMessage)
