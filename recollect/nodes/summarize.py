"""Fold the messages that left the verbatim window into the running summary.

Runs after the reply, and only when enough has left the window (`fold_due`), so most turns
make no extra model call. A failed fold (HTTP error, timeout) loses nothing: the messages stay
in `unfolded`, still shown verbatim in the prompt, and the next turn folds them.
"""

from __future__ import annotations

import logging
from typing import Any

from langgraph.runtime import Runtime

from recollect.memory.models import chat_model
from recollect.memory.summary import cap_summary, fold_due, fold_prompt
from recollect.nodes.context import context_of
from recollect.state.agent import AgentState, RunningSummary
from recollect.state.context import Context

logger = logging.getLogger(__name__)


def summarize(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Extend the summary with `unfolded`; clear it only once the fold succeeded."""
    ctx = context_of(runtime)
    pending = list(state.get("unfolded", []))
    if not fold_due(pending, ctx.max_history_tokens):
        return {}
    previous = state.get("summary")
    cap = ctx.summary_max_tokens
    prompt = fold_prompt(previous["text"] if previous else "", pending, cap)
    try:
        reply = chat_model(ctx.model).bind(max_tokens=cap).invoke(prompt)
    except Exception as exc:  # any provider failure; the messages wait for the next turn
        logger.warning("summary fold failed, %d messages kept for later: %s", len(pending), exc)
        return {}
    summary = RunningSummary(
        text=cap_summary(reply.text, cap),
        last_folded_id=pending[-1].id,
        folded_messages=(previous["folded_messages"] if previous else 0) + len(pending),
    )
    return {"summary": summary, "unfolded": []}
