"""What a caller of the served API may set in a run's `context`: bounded, checked at the door.

The operator pays for every model call and every token, so a caller picks a model only from the
deployment's allow-list and sets budgets and worker counts only up to the caps below; anything
else is refused with one line before a run, cron or assistant exists (no model call, no trace,
no job). The environment's own defaults are the operator's and are not capped here; the command
line, where the operator is the caller, is not checked.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from recollect.models.factory import OFFLINE_MODEL, resolve_model_name

ALLOWED_MODELS_ENV = "RECOLLECT_ALLOWED_MODELS"
"""Comma-separated `provider:model` names a caller may choose beside the deployment's default."""

WHOLE_CAPS: dict[str, int] = {
    "max_history_tokens": 16_000,
    "summary_max_tokens": 2_000,
    "context_tokens": 32_000,
    "recall_tokens": 8_000,
    "per_worker_tokens": 8_000,
    "handoff_tokens": 2_000,
    "max_workers": 16,
    "worker_max_steps": 12,
    "extract_every_turns": 100,
}
"""Largest value a caller may set for each whole-number field (the least is 1)."""
RANGES: dict[str, tuple[float, float]] = {
    "min_confidence": (0.0, 1.0),
    "extract_after_idle_s": (0.0, 86_400.0),
}
"""Inclusive range a caller may set for each number field."""
SYSTEM_PROMPT_CHARS = 8_000
"""Longest system prompt a caller may set."""


def allowed_models() -> frozenset[str]:
    """The deployment's default model, the offline stand-in and `RECOLLECT_ALLOWED_MODELS`."""
    listed = os.environ.get(ALLOWED_MODELS_ENV, "")
    extra = {name.strip() for name in listed.split(",") if name.strip()}
    return frozenset({resolve_model_name(""), OFFLINE_MODEL, *extra})


def context_refusal(context: object) -> str | None:
    """Why a caller's context must be refused, if a value in it is out of bounds (a null is
    a value left unset)."""
    if not isinstance(context, Mapping):
        return None
    model = context.get("model")
    if model not in (None, "") and model not in allowed_models():
        allowed = ", ".join(sorted(allowed_models()))
        return f"context.model {str(model)[:80]!r} is not allowed here (allowed: {allowed})"
    for name, cap in WHOLE_CAPS.items():
        if context.get(name) is not None and not _whole_in(context[name], 1, cap):
            return f"context.{name} must be a whole number from 1 to {cap}"
    for name, (low, high) in RANGES.items():
        if context.get(name) is not None and not _number_in(context[name], low, high):
            return f"context.{name} must be a number from {low:g} to {high:g}"
    prompt = context.get("system_prompt")
    if prompt is not None and (not isinstance(prompt, str) or len(prompt) > SYSTEM_PROMPT_CHARS):
        return f"context.system_prompt must be text of at most {SYSTEM_PROMPT_CHARS} characters"
    return None


def _whole_in(value: Any, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _number_in(value: Any, low: float, high: float) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and low <= value <= high
