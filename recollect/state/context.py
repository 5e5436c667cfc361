"""Run-time configuration, passed to every node as LangGraph's runtime context.

Defaults come from the environment when a `Context` is built; values given at run time win.
Each graph's context schema is a subclass that names the settings it offers (Studio shows
those, with their descriptions and defaults; `recollect/state/run_settings.py`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import ClassVar

from pydantic import ConfigDict

from recollect.state.run_settings import run_settings_schema

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

    __pydantic_config__ = ConfigDict(json_schema_extra=run_settings_schema)
    offered_settings: ClassVar[frozenset[str] | None] = None
    """The fields a graph offers as run settings (None: every field but the identity's)."""

    user_id: str = field(default_factory=lambda: _env_str("RECOLLECT_USER_ID", "local-user"))
    """Whose memory this run reads and writes."""
    org_id: str = field(default_factory=lambda: _env_str("RECOLLECT_ORG_ID", "default"))
    """The organisation the user belongs to (tenant of every memory row)."""
    permissions: tuple[str, ...] = ()
    """What this identity may do beyond its own data (`reviewer`). On the served API both ids
    and permissions come from authentication and whatever a caller sends here is refused or
    replaced; on the command line the operator's word is taken."""
    model: str = field(default_factory=lambda: _env_str("RECOLLECT_MODEL", ""))
    """`provider:model` for `init_chat_model`; empty picks the default for the environment."""
    system_prompt: str = field(
        default_factory=lambda: _env_str("RECOLLECT_SYSTEM_PROMPT", DEFAULT_SYSTEM_PROMPT)
    )
    """The instructions that open every prompt, before the memory sections."""
    max_history_tokens: int = field(
        default_factory=lambda: _env_int("RECOLLECT_MAX_HISTORY_TOKENS", 3000)
    )
    """Verbatim tail kept in state; older messages are removed from the checkpoint."""
    summary_max_tokens: int = field(
        default_factory=lambda: _env_int("RECOLLECT_SUMMARY_MAX_TOKENS", 400)
    )
    """Cap on the running summary, enforced with the model's `max_tokens` and a hard cut."""
    context_tokens: int = field(default_factory=lambda: _env_int("RECOLLECT_CONTEXT_TOKENS", 6000))
    """Budget for the whole prompt sent to the model."""
    recall_tokens: int = field(default_factory=lambda: _env_int("RECOLLECT_RECALL_TOKENS", 800))
    """Budget for recalled long-term memory (profile, facts, episodes) within the prompt."""
    min_confidence: float = field(
        default_factory=lambda: _env_float("RECOLLECT_MIN_CONFIDENCE", 0.7)
    )
    """Facts below this confidence go to review instead of long-term memory."""
    extraction: bool = field(
        default_factory=lambda: (
            _env_str("RECOLLECT_EXTRACTION", "on").lower() not in ("off", "0", "false", "no")
        )
    )
    """Queue each turn for background fact extraction (never run on the reply path)."""
    extract_after_idle_s: float = field(
        default_factory=lambda: _env_float("RECOLLECT_EXTRACT_AFTER_IDLE_S", 30.0)
    )
    """Seconds a thread stays idle before its queued turns are extracted (unless
    `extract_every_turns` comes first)."""
    extract_every_turns: int = field(
        default_factory=lambda: _env_int("RECOLLECT_EXTRACT_EVERY_TURNS", 5)
    )
    """Queued turns that start a thread's extraction at once, without waiting for it to be
    idle for `extract_after_idle_s`."""

    per_worker_tokens: int = field(
        default_factory=lambda: _env_int("RECOLLECT_PER_WORKER_TOKENS", 1500)
    )
    """Orchestrator: each worker's starting context (task, blackboard, its notes, its recall)."""
    handoff_tokens: int = field(default_factory=lambda: _env_int("RECOLLECT_HANDOFF_TOKENS", 400))
    """Orchestrator: the cap on one worker's distilled result (summary, facts, questions)."""
    max_workers: int = field(default_factory=lambda: _env_int("RECOLLECT_MAX_WORKERS", 8))
    """Orchestrator: subtasks (workers) per task at most."""
    worker_max_steps: int = field(default_factory=lambda: _env_int("RECOLLECT_WORKER_MAX_STEPS", 4))
    """Orchestrator: model calls a worker may make before it must report."""

    def __post_init__(self) -> None:
        """Budgets that cannot work are refused here, not discovered mid-conversation."""
        for name in (
            "max_history_tokens",
            "summary_max_tokens",
            "context_tokens",
            "per_worker_tokens",
            "max_workers",
            "worker_max_steps",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"Context.{name} must be a positive whole number, got {value!r}")
        if (
            isinstance(self.handoff_tokens, bool)
            or not isinstance(self.handoff_tokens, int)
            or (self.handoff_tokens < 8)
        ):
            raise ValueError(
                f"Context.handoff_tokens must be a whole number of at least 8, "
                f"got {self.handoff_tokens!r}"
            )
