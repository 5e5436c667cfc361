"""Fold the messages that left the verbatim window into the running summary.

Runs after the reply, and only when enough has left the window (`fold_due`), so most turns
make no extra model call. A failed fold (HTTP error, timeout) loses nothing: the messages stay
in `unfolded`, still shown verbatim in the prompt, and the next turn folds them. The offline
stand-in cannot summarise, so without a model the fold is extractive (`extractive_fold`).
"""

from __future__ import annotations

import logging
from typing import Any

from langgraph.runtime import Runtime

from nodes.context import context_of
from recollect.history.summary import cap_summary, extractive_fold, fold_due, fold_prompt
from recollect.models.factory import OFFLINE_MODEL, chat_model, resolve_model_name
from state.agent import AgentState, RunningSummary
from state.context import Context

logger = logging.getLogger(__name__)


def fold_pending(state: AgentState, runtime: Runtime[Context]) -> bool:
    """Whether this turn should fold; routing on it skips a whole step (and checkpoint)."""
    return fold_due(list(state.get("unfolded", [])), context_of(runtime).max_history_tokens)


def summarize(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Extend the summary with `unfolded`; clear it only once the fold succeeded."""
    ctx = context_of(runtime)
    pending = list(state.get("unfolded", []))
    if not fold_due(pending, ctx.max_history_tokens):
        return {}
    previous = state.get("summary")
    old = previous["text"] if previous else ""
    cap = ctx.summary_max_tokens
    if resolve_model_name(ctx.model) == OFFLINE_MODEL:
        text = extractive_fold(old, pending, cap)
    else:
        try:
            reply = (
                chat_model(ctx.model).bind(max_tokens=cap).invoke(fold_prompt(old, pending, cap))
            )
        except Exception as exc:  # any provider failure; the messages wait for the next turn
            logger.warning("summary fold failed, %d messages kept for later: %s", len(pending), exc)
            return {}
        text = reply.text
        if not text.strip():  # an empty fold would drop the messages without a trace
            logger.warning("summary fold came back empty, %d messages kept", len(pending))
            return {}
    summary = RunningSummary(
        text=cap_summary(text, cap),
        last_folded_id=pending[-1].id,
        folded_messages=(previous["folded_messages"] if previous else 0) + len(pending),
    )
    return {"summary": summary, "unfolded": []}
