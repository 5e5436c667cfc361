"""Whether traces are written: `RECOLLECT_TRACE` (on by default)."""

from __future__ import annotations

import os

from recollect.gate import mask_secrets
from recollect.store.errors import ConfigurationError
from recollect.store.storable import storable

TRACE_ENV = "RECOLLECT_TRACE"
EXIT_TIMEOUT_ENV = "RECOLLECT_TRACE_EXIT_TIMEOUT_S"
DEFAULT_EXIT_TIMEOUT_S = 5.0
"""How long a closing process waits for its queued traces: long enough for a loaded machine to
write them, short enough that a database that went away cannot hold the exit for the pool's
own 30 s connection wait."""
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
    """`text` with its secrets masked (before the cut, so no half of one is kept), cut to
    `limit` characters, marked when cut, as the trace table can store it."""
    text = mask_secrets(text)
    return storable(text if len(text) <= limit else text[: limit - 1] + "…")


def exit_timeout_s() -> float:
    """`RECOLLECT_TRACE_EXIT_TIMEOUT_S`: seconds exit waits for queued traces (default 5)."""
    raw = (os.environ.get(EXIT_TIMEOUT_ENV) or "").strip()
    try:
        value = float(raw) if raw else DEFAULT_EXIT_TIMEOUT_S
    except ValueError:
        raise ConfigurationError(f"{EXIT_TIMEOUT_ENV} must be a number, got {raw[:40]!r}") from None
    if not value >= 0:
        raise ConfigurationError(f"{EXIT_TIMEOUT_ENV} must be 0 or more, got {raw[:40]!r}")
    return value
