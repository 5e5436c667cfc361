"""Fold the messages that left the verbatim window into the running summary.

Runs after the reply, and only when enough has left the window (`fold_due`), so most turns
make no extra model call. Each request carries at most `FOLD_BATCH_TOKENS` of messages. A
failed fold (HTTP error, timeout) loses nothing: the messages stay in `unfolded` and the next
turn folds them. After `MAX_FOLD_FAILURES` failures in a row, or when `unfolded` outgrows its
cap, the fold is extractive (`extractive_fold`), so a summariser that is down cannot make state
grow; `fold_status` says which fold ran. The offline stand-in cannot summarise, so without a
model the fold is always extractive.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage
from langgraph.runtime import Runtime

from recollect.history.summary import (
    MAX_FOLD_CALLS,
    MAX_FOLD_FAILURES,
    cap_summary,
    extractive_fold,
    fold_batches,
    fold_due,
    fold_prompt,
    over_cap,
)
from recollect.models.factory import OFFLINE_MODEL, chat_model, resolve_model_name
from recollect.prebuilt.run_context import context_of
from recollect.prebuilt.trace import note_fold
from recollect.state.agent_state import AgentState
from recollect.state.context import Context
from recollect.state.memory_state import FoldStatus, RunningSummary

logger = logging.getLogger(__name__)


def fold_pending(state: AgentState, runtime: Runtime[Context]) -> bool:
    """Whether this turn should fold; routing on it skips a whole step (and checkpoint)."""
    return fold_due(list(state.get("unfolded", [])), context_of(runtime).max_history_tokens)


def summarize(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Extend the summary with `unfolded`; clear what was folded, keep what was not."""
    ctx = context_of(runtime)
    pending: list[BaseMessage] = list(state.get("unfolded", []))
    if not fold_due(pending, ctx.max_history_tokens):
        return {}
    previous = state.get("summary")
    text = previous["text"] if previous else ""
    cap = ctx.summary_max_tokens
    status = state.get("fold_status") or FoldStatus(failures=0, extractive_folds=0, last="")
    folded: list[BaseMessage] = []
    failed = False
    if resolve_model_name(ctx.model) == OFFLINE_MODEL:
        text, folded = extractive_fold(text, pending, cap), pending
        status = {
            **status,
            "extractive_folds": status["extractive_folds"] + 1,
            "last": "extractive",
        }
    else:
        text, folded, failed = _model_fold(ctx, text, pending, cap)
        if folded:
            status = {**status, "failures": 0, "last": "model"}
        rest = pending[len(folded) :]
        failures = status["failures"] + (1 if failed else 0)
        overflow = over_cap(rest, ctx.max_history_tokens)
        if rest and (failures >= MAX_FOLD_FAILURES or overflow):
            forced = rest if failures >= MAX_FOLD_FAILURES else overflow
            logger.warning(
                "summary fold: %d messages folded without the model (%s)",
                len(forced),
                f"{failures} failures in a row" if failures >= MAX_FOLD_FAILURES else "over cap",
            )
            text = extractive_fold(text, forced, cap)
            folded = folded + forced
            status = {
                "failures": 0,
                "extractive_folds": status["extractive_folds"] + 1,
                "last": "extractive",
            }
        elif failed:
            status = {**status, "failures": failures, "last": "failed"}
    update: dict[str, Any] = {"fold_status": status}
    if folded:
        update["summary"] = RunningSummary(
            text=cap_summary(text, cap),
            last_folded_id=folded[-1].id,
            folded_messages=(previous["folded_messages"] if previous else 0) + len(folded),
        )
        update["unfolded"] = pending[len(folded) :]
        note_fold(state, update["summary"], folded, status["last"])
    return update


async def asummarize(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The async twin: a fold waits on the model in a thread (as LangGraph runs a step that
    has only a sync form); a turn with nothing to fold does not leave the loop."""
    if not fold_pending(state, runtime):
        return {}
    return await asyncio.to_thread(summarize, state, runtime)


def _model_fold(
    ctx: Context, text: str, pending: Sequence[BaseMessage], cap: int
) -> tuple[str, list[BaseMessage], bool]:
    """Fold batch by batch (at most `MAX_FOLD_CALLS`); stop at the first failure.

    Returns the new text, the messages folded into it, and whether a request failed.
    """
    folded: list[BaseMessage] = []
    model = chat_model(ctx.model).bind(max_tokens=cap)
    for batch in fold_batches(pending)[:MAX_FOLD_CALLS]:
        try:
            reply = model.invoke(fold_prompt(text, batch, cap))
        except Exception as exc:  # any provider failure; the messages wait for the next turn
            logger.warning("summary fold failed, %d messages kept for later: %s", len(batch), exc)
            return text, folded, True
        if not reply.text.strip():  # an empty fold would drop the messages without a trace
            logger.warning("summary fold came back empty, %d messages kept", len(batch))
            return text, folded, True
        text = cap_summary(reply.text, cap)
        folded += batch
    return text, folded, False
