"""The turn's memory trace, gathered by the nodes that know each part and handed, once per
turn, to the engine's background writer (`RECOLLECT_TRACE=off` skips all of it).

recall adds every candidate it weighed; trim the ids it removed or cut; call_model the tokens
and budgets per prompt category and what was shown or hidden; summarize the fold; extract (the
last step) adds the turn's messages and metrics and submits the trace. When
`LANGSMITH_API_KEY` is set the metrics also go onto the run's LangSmith metadata.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.tracers.langchain import LangChainTracer
from langgraph.config import get_config

from nodes.prompt import Prompt
from recollect.longterm.records import Recollection
from recollect.models.factory import resolve_model_name
from recollect.store.pool import shared_pool
from recollect.store.scope import Scope
from recollect.trace.metrics import used_items
from recollect.trace.settings import clip, tracing_enabled
from recollect.trace.store import PendingTrace
from recollect.trace.writer import WRITER
from state.agent import AgentState, RunningSummary
from state.context import Context

MAX_CANDIDATES = 30
"""Recall candidates kept per trace (best first): enough to see what just missed."""


def recall_part(found: Recollection | None) -> dict[str, Any]:
    """The start of the turn's trace: every candidate recall ranked, kept or dropped (why)."""
    if found is None:
        return {"started": True, "recall": []}
    return {
        "started": True,
        "recall": [
            {**c.model_dump(mode="json"), "text": clip(c.text, 500)}
            for c in found.candidates[:MAX_CANDIDATES]
        ],
        "candidates": len(found.candidates),
        "profile": [f"{p.key}: {clip(p.value, 200)}" for p in found.profile],
    }


def trim_part(removed: Sequence[BaseMessage], cut: Sequence[str]) -> dict[str, Any]:
    """The message ids trim removed from the checkpoint and those it cut in the middle."""
    return {"trimmed": [m.id for m in removed if m.id], "truncated": list(cut)}


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
        "model_calls": int((state.get("turn_trace") or {}).get("model_calls", 0)) + 1,
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


def record_turn(state: AgentState, ctx: Context, thread_id: str | None) -> dict[str, Any]:
    """Finish the turn's trace and hand it to the writer; the update clears it from state."""
    gathered = dict(state.get("turn_trace") or {})
    if not tracing_enabled() or not thread_id or not gathered:
        return {"turn_trace": None} if gathered else {}
    messages = list(state.get("messages", []))
    human = next((m for m in reversed(messages) if isinstance(m, HumanMessage)), None)
    reply = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
    recalled = {item["id"]: item["text"] for item in state.get("recalled") or []}
    shown = [i for i in gathered.get("recalled_shown", []) if i in recalled]
    used = used_items(reply.text if reply else "", [(i, recalled[i]) for i in shown])
    summary = state.get("summary")
    gathered.pop("started", None)
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
    WRITER.submit(shared_pool(), PendingTrace(scope, thread_id, trace))
    attach_to_langsmith(trace["metrics"] | {"tokens": trace.get("tokens", {})})
    return {"turn_trace": None}


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
