"""Whether traces are written: `RECOLLECT_TRACE` (on by default)."""

from __future__ import annotations

import os

from recollect.store.errors import ConfigurationError

TRACE_ENV = "RECOLLECT_TRACE"
MAX_TEXT_CHARS = 2000
"""Texts kept in a trace are cut here, so one huge message cannot make a trace row huge."""


def tracing_enabled() -> bool:
    """`on` (default) or `off`; anything else is refused with one line."""
    raw = (os.environ.get(TRACE_ENV) or "on").strip().lower()
    if raw in ("on", "1", "true", "yes"):
        return True
    if raw in ("off", "0", "false", "no"):
        return False
    raise ConfigurationError(f"{TRACE_ENV} must be on or off, got {raw[:40]!r}")


def clip(text: str, limit: int = MAX_TEXT_CHARS) -> str:
    """`text` cut to `limit` characters, marked when cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"
