"""Run-time configuration, passed to every node as LangGraph's runtime context.

Defaults come from the environment when a `Context` is built; values given at run time win.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

DEFAULT_SYSTEM_PROMPT = (
    "You are a helpful assistant with memory. Use the memory sections below when they are "
    "relevant; prefer newer information over older, and say so when you are unsure."
)


def _env_str(name: str, default: str) -> str:
    return os.environ.get(name) or default


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise ValueError(f"{name} must be a whole number, got {raw!r}") from exc


def _env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        return float(raw)
    except ValueError as exc:
        raise ValueError(f"{name} must be a number, got {raw!r}") from exc


@dataclass(kw_only=True)
class Context:
    """Who is talking and how much the model may see; one value per run."""

    user_id: str = field(default_factory=lambda: _env_str("RECOLLECT_USER_ID", "local-user"))
    org_id: str = field(default_factory=lambda: _env_str("RECOLLECT_ORG_ID", "default"))
    model: str = field(default_factory=lambda: _env_str("RECOLLECT_MODEL", ""))
    """`provider:model` for `init_chat_model`; empty picks the default for the environment."""
    system_prompt: str = field(
        default_factory=lambda: _env_str("RECOLLECT_SYSTEM_PROMPT", DEFAULT_SYSTEM_PROMPT)
    )
    max_history_tokens: int = field(
        default_factory=lambda: _env_int("RECOLLECT_MAX_HISTORY_TOKENS", 3000)
    )
    """Verbatim tail kept in state; older messages are removed from the checkpoint."""
    context_tokens: int = field(default_factory=lambda: _env_int("RECOLLECT_CONTEXT_TOKENS", 6000))
    """Budget for the whole prompt sent to the model."""
    recall_tokens: int = field(default_factory=lambda: _env_int("RECOLLECT_RECALL_TOKENS", 800))
    """Budget for recalled long-term memory (profile, facts, episodes) within the prompt."""
    min_confidence: float = field(
        default_factory=lambda: _env_float("RECOLLECT_MIN_CONFIDENCE", 0.7)
    )
    """Facts below this confidence go to review instead of long-term memory."""
