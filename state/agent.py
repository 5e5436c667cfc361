"""The agent's state: what is checkpointed after every step, with an explicit reducer per field.

Sub-records are TypedDicts (plain dicts on disk) so checkpoints stay small and load without
registering classes with the serializer.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Annotated, ClassVar

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from recollect.history.pinning import merge_pins
from recollect.history.records import PinnedValue
from state.context import Context


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


class FoldStatus(TypedDict):
    """How the summary fold is doing, for traces: failures in a row and model-free folds."""

    failures: int
    extractive_folds: int
    last: str
    """"model", "extractive" (the offline model, or after repeated failures) or "failed"."""


def merge_pinned(
    current: dict[str, PinnedValue] | None, update: dict[str, PinnedValue | None] | None
) -> dict[str, PinnedValue]:
    """A restated key moves to the newest place; None removes a key (unpin, or correct by
    removing then adding); beyond the caps the oldest go (`recollect.history.pinning`)."""
    return merge_pins(current, update)


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
    """Exact values, oldest first; capped, so 1,000 order ids cannot fill a prompt."""
    pinned_through: str | None
    """Id of the newest message already scanned for pins; older ones are not scanned again."""
    queued_through: str | None
    """Id of the newest message a turn handed to the extraction queue; later turns send only
    what follows it (all they hold when it has left the window)."""
    unpinned: Annotated[int, operator.add]
    """Pins the cap pushed out (each named to the summary fold when it happened)."""
    fold_status: FoldStatus
    recalled: Annotated[list[RecalledItem], replace_recalled]
    context_tokens: dict[str, int]
    """Tokens per prompt category on the last model call (system, summary, history, ...)."""


class AgentInput(TypedDict):
    """What a caller sends: new messages only."""

    messages: Annotated[list[AnyMessage], add_messages]


@dataclass(kw_only=True)
class AgentContext(Context):
    """The agent's run settings: its model and prompt, the history and recall budgets, and
    how its turns are queued for extraction."""

    offered_settings: ClassVar[frozenset[str] | None] = frozenset(
        {
            "model",
            "system_prompt",
            "max_history_tokens",
            "summary_max_tokens",
            "context_tokens",
            "recall_tokens",
            "extraction",
            "min_confidence",
            "extract_after_idle_s",
            "extract_every_turns",
        }
    )
