"""The memory's own state fields, as a mixin any graph's state can add to its own.

`class State(MessagesState, MemoryState)` gives a plain `StateGraph` everything the memory
nodes read and write (`recollect/prebuilt/middleware.py` mixes it into `create_agent`'s state).
The TypedDicts come from `typing_extensions`, which is what `MessagesState` and LangChain's
`AgentState` use (mixing in `typing.TypedDict` is a metaclass conflict), and what pydantic
needs to build their JSON schemas on Python 3.11. Sub-records are TypedDicts (plain dicts on
disk), so checkpoints stay small and load without registering classes with the serializer.
"""

from __future__ import annotations

import operator
from typing import Annotated

from langchain_core.messages import AnyMessage
from typing_extensions import TypedDict

from recollect.history.pinning import merge_pins
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


class MemoryState(TypedDict, total=False):
    """What the memory nodes keep beside a thread's `messages`: pins, the folded past, this
    turn's recall, and how far the thread was pinned and queued for extraction."""

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
    recalled_shown: dict[str, str]
    """The recalled lines the prompt shows after each user message still in the history, by
    the message's id: a later turn shows only what they do not already say."""
    context_tokens: dict[str, int]
    """Tokens per prompt category on the last model call (system, summary, history, ...)."""
