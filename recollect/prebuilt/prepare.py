"""Long-term recall and the history trim as one call, for hosts with a single hook before the
model: `MemoryMiddleware.before_agent`, `MemoryHooks.pre_model_hook`, or one step of a
`StateGraph` of your own (`docs/drop-in.md`). The template's agent graph runs them as two
steps side by side (`graphs/agent.py`), as the design card draws the turn.

Recall writes only `recalled`; trim writes the history's fields (`messages`, pins, what is
left to fold). With nothing in common, one call serves both (a field both wrote is refused),
and trim's CPU runs while recall waits on its database round trip.
"""

from __future__ import annotations

import asyncio
from typing import Any

from langgraph.runtime import Runtime

from recollect.prebuilt.recall import MemorySource, RecallNode
from recollect.prebuilt.trim import atrim, trim
from recollect.state.agent_state import AgentState
from recollect.state.context import Context


class PrepareNode:
    """Recall (bound to its memory source) and trim, as one step with two forms. Give it the
    `RecallNode`, or the memory source to build one over."""

    def __init__(self, recall: RecallNode | MemorySource) -> None:
        self._recall = recall if isinstance(recall, RecallNode) else RecallNode(recall)

    def __call__(self, state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
        return _together(self._recall(state, runtime), trim(state, runtime))

    async def acall(self, state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
        """Recall's SQL is in flight while trim computes the window on the loop."""
        recalled, trimmed = await asyncio.gather(
            self._recall.acall(state, runtime), atrim(state, runtime)
        )
        return _together(recalled, trimmed)


def _together(recalled: dict[str, Any], trimmed: dict[str, Any]) -> dict[str, Any]:
    """One update from both; a field both wrote would lose one of them, so it is refused."""
    shared = recalled.keys() & trimmed.keys()
    if shared:
        raise RuntimeError(f"recall and trim both wrote {sorted(shared)}")
    return {**trimmed, **recalled}
