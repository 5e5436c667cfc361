"""A turn's entry check: the new human messages must be within the size limits, so a run that
would fail fails with one line before any node, embedder or model runs."""

from __future__ import annotations

from langchain_core.messages import HumanMessage

from recollect.history.limits import check_message
from recollect.history.pinning import unscanned
from recollect.state.agent_state import AgentState


def check_new_messages(state: AgentState) -> None:
    """Check the human messages after the last reply; raises the limits' own error."""
    for message in reversed(state.get("messages", [])):
        if not isinstance(message, HumanMessage):
            break
        check_message(message.content)


def turn_starts(state: AgentState) -> bool:
    """Whether a user's message arrived since trim last ran (trim marks the newest message it
    pinned from): recall and trim run once a turn, before its first model call, not again
    after each tool call. A turn whose input ends in a tool result counts too."""
    fresh = unscanned(list(state.get("messages", [])), state.get("pinned_through"))
    return any(isinstance(message, HumanMessage) for message in fresh)
