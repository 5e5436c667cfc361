"""The agent's state: what is checkpointed after every step, with an explicit reducer per field
(the memory's own fields are `MemoryState`, which any graph's state can mix in)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, ClassVar

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from state.context import Context
from state.memory_state import MemoryState


class AgentState(MemoryState, total=False):
    """Everything one conversation thread carries between turns: its messages and the
    memory's fields (`MemoryState`)."""

    messages: Annotated[list[AnyMessage], add_messages]


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
