"""The turn's memory trace, gathered by the nodes that know each part and handed, once per
turn, to the engine's background writer (`RECOLLECT_TRACE=off` skips all of it).

recall notes every candidate it weighed; trim the ids it removed or cut; call_model the tokens
and budgets per prompt category and what was shown or hidden; summarize the fold; extract (the
last step) adds the turn's messages and metrics and submits the trace. Parts wait in the
engine's in-process collector, keyed by thread and the turn's user message, not in state, so
checkpoints do not grow. When `LANGSMITH_API_KEY` is set the metrics also go onto the run's
LangSmith metadata.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.tracers.langchain import LangChainTracer
from langgraph.config import get_config

from recollect.longterm.records import Recollection
from recollect.models.factory import resolve_model_name
from recollect.prebuilt.prompt import Prompt
from recollect.prebuilt.queue_for_extraction import run_thread_id
from recollect.state.agent_state import AgentState
from recollect.state.context import Context
from recollect.state.memory_state import RunningSummary
from recollect.store.pool import shared_pool
from recollect.store.scope import Scope
from recollect.trace.collector import COLLECTOR, TurnKey
from recollect.trace.metrics import used_items
from recollect.trace.settings import clip, tracing_enabled
from recollect.trace.store import PendingTrace
from recollect.trace.writer import WRITER

MAX_CANDIDATES = 30
"""Recall candidates kept per trace (best first): enough to see what just missed."""


def turn_key(state: AgentState) -> TurnKey | None:
    """The open turn's key, or None when tracing is off or the run has no thread."""
    if not tracing_enabled():
        return None
    try:
        thread_id = run_thread_id()
    except RuntimeError:  # a step called outside a run (a unit test of a node): no trace
        return None
    human = next(
        (m for m in reversed(state.get("messages", [])) if isinstance(m, HumanMessage)), None
    )
    if not thread_id or human is None or not human.id:
        return None
    return (thread_id, human.id)


def note_recall(state: AgentState, found: Recollection | None) -> None:
    """Add every candidate recall ranked, kept or dropped (why). Merged, not started afresh:
    trim runs in the same step and may note its part first."""
    key = turn_key(state)
    if key is not None:
        COLLECTOR.add(key, recall_part(found))


def note_trim(state: AgentState, removed: Sequence[BaseMessage], cut: Sequence[str]) -> None:
    """Add the message ids trim removed from the checkpoint and those it cut."""
    key = turn_key(state)
    if key is not None:
        COLLECTOR.add(key, {"trimmed": [m.id for m in removed if m.id], "truncated": list(cut)})


def note_prompt(state: AgentState, prompt: Prompt) -> None:
    """Add the prompt's tokens, budgets and what it showed (the last model call wins)."""
    key = turn_key(state)
    if key is not None:
        calls = int((COLLECTOR.add(key, {})).get("model_calls", 0)) + 1
        COLLECTOR.add(key, {**prompt_part(state, prompt), "model_calls": calls})


def note_fold(
    state: AgentState, summary: RunningSummary, folded: Sequence[BaseMessage], how: str
) -> None:
    """Add the summary version this turn wrote, which messages went into it, and how."""
    key = turn_key(state)
    if key is not None:
        COLLECTOR.add(key, fold_part(summary, folded, how))


def recall_part(found: Recollection | None) -> dict[str, Any]:
    """Every candidate recall ranked, kept or dropped (why), and the profile shown."""
    if found is None:
        return {"recall": []}
    return {
        "recall": [
            {**c.model_dump(mode="json"), "text": clip(c.text, 500)}
            for c in found.candidates[:MAX_CANDIDATES]
        ],
        "candidates": len(found.candidates),
        "profile": [f"{p.key}: {clip(p.value, 200)}" for p in found.profile],
    }


def prompt_part(state: AgentState, prompt: Prompt) -> dict[str, Any]:
    """Tokens and budget per category, and what made the prompt (the last call of the turn)."""
    pinned = state.get("pinned") or {}
    shown_pins = set(prompt.shown.get("pinned", []))
    return {
        "tokens": dict(prompt.tokens),
        "budgets": prompt.shown.get("budgets", {}),
        "recalled_shown": prompt.shown.get("recalled", []),
        "pinned": {
            "shown": [_pin(p) for k, p in pinned.items() if k in shown_pins],
            "hidden": [_pin(p) for k, p in pinned.items() if k not in shown_pins],
        },
        "summary_shown": clip(prompt.shown.get("summary", "")),
        "history_ids": prompt.shown.get("history_ids", []),
    }


def _pin(pin: Any) -> dict[str, str]:
    return {"kind": str(pin["kind"]), "value": clip(str(pin["value"]), 300)}


def fold_part(summary: RunningSummary, folded: Sequence[BaseMessage], how: str) -> dict[str, Any]:
    """The summary version this turn wrote and which messages were folded into it."""
    return {
        "fold": {
            "version": summary["folded_messages"],
            "folded_ids": [m.id for m in folded if m.id],
            "how": how,
            "text": clip(summary["text"]),
        }
    }


def record_turn(state: AgentState, ctx: Context) -> None:
    """Finish the turn's trace and hand it to the writer (off the reply path)."""
    key = turn_key(state)
    gathered = COLLECTOR.take(key) if key is not None else None
    if key is None or gathered is None:
        return
    messages = list(state.get("messages", []))
    human = next((m for m in reversed(messages) if isinstance(m, HumanMessage)), None)
    reply = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
    recalled = {item["id"]: item["text"] for item in state.get("recalled") or []}
    shown = [i for i in gathered.get("recalled_shown", []) if i in recalled]
    used = used_items(reply.text if reply else "", [(i, recalled[i]) for i in shown])
    summary = state.get("summary")
    trace = {
        **gathered,
        "model": resolve_model_name(ctx.model),
        "user_message": _said(human),
        "reply": _said(reply),
        "summary": {"version": summary["folded_messages"] if summary else 0},
        "metrics": {
            "history_tokens": int(gathered.get("tokens", {}).get("history", 0)),
            "recalled_shown": shown,
            "recalled_used": used,
        },
    }
    scope = Scope.for_user(ctx.org_id, ctx.user_id)
    WRITER.submit(shared_pool(), PendingTrace(scope, key[0], trace))
    attach_to_langsmith(trace["metrics"] | {"tokens": trace.get("tokens", {})})


def _said(message: BaseMessage | None) -> dict[str, Any] | None:
    if message is None:
        return None
    return {"id": message.id, "text": clip(message.text)}


def attach_to_langsmith(metrics: dict[str, Any]) -> bool:
    """Put the turn's memory metrics on the LangSmith run of the current step (and so in the
    ecosystem's own UI), when a key is configured and the run is traced; True if attached."""
    if not os.environ.get("LANGSMITH_API_KEY"):
        return False
    try:
        config = get_config()
    except RuntimeError:
        return False
    manager = config.get("callbacks")
    run_id = getattr(manager, "parent_run_id", None)
    attached = False
    for handler in getattr(manager, "handlers", []) or []:
        if isinstance(handler, LangChainTracer) and run_id is not None:
            run = handler.run_map.get(str(run_id))
            if run is not None:
                metadata = run.extra.setdefault("metadata", {})
                metadata.update({f"memory_{k}": v for k, v in metrics.items()})
                attached = True
    return attached
