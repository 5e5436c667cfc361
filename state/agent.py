"""The agent graph's state and run settings: the memory's `AgentState` as it is, and the
settings this graph offers (Studio shows those, with their descriptions and defaults)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from recollect import AgentInput, AgentState, Context

__all__ = ["AgentContext", "AgentInput", "AgentState"]


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
