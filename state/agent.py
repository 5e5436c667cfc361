"""The agent's state: what is checkpointed after every step, with an explicit reducer per field.

Sub-records are TypedDicts (plain dicts on disk) so checkpoints stay small and load without
registering classes with the serializer.
"""

from __future__ import annotations

from typing import Annotated, TypedDict

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages

from recollect.history.records import PinnedValue


class RunningSummary(TypedDict):
    """The folded past: text plus the id of the last message folded into it."""

    text: str
    last_folded_id: str | None
    folded_messages: int


class RecalledItem(TypedDict):
    """A long-term memory chosen for this turn, with the score that chose it."""

    id: str
    kind: str
    text: str
    learned_at: str
    score: float


def merge_pinned(
    current: dict[str, PinnedValue] | None, update: dict[str, PinnedValue] | None
) -> dict[str, PinnedValue]:
    """Newest value wins per key; keys are never dropped by a partial update."""
    merged = dict(current or {})
    merged.update(update or {})
    return merged


def replace_recalled(
    _current: list[RecalledItem] | None, update: list[RecalledItem] | None
) -> list[RecalledItem]:
    """Recall is per turn: each turn's result replaces the last one's."""
    return list(update or [])


class AgentState(TypedDict, total=False):
    """Everything one conversation thread carries between turns."""

    messages: Annotated[list[AnyMessage], add_messages]
    summary: RunningSummary | None
    unfolded: list[AnyMessage]
    """Messages that left the verbatim window but are not yet folded into `summary`."""
    pinned: Annotated[dict[str, PinnedValue], merge_pinned]
    recalled: Annotated[list[RecalledItem], replace_recalled]
    context_tokens: dict[str, int]
    """Tokens per prompt category on the last model call (system, summary, history, ...)."""


class AgentInput(TypedDict):
    """What a caller sends: new messages only."""

    messages: Annotated[list[AnyMessage], add_messages]
