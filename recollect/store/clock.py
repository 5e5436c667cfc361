"""The application's clock: UTC now, shifted by `RECOLLECT_CLOCK_OFFSET` when it is set.

Workflows wait days for a human; the offset lets a process (a test, a rehearsal) act "three
days later" without touching the system clock or patching `time` globally.
"""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime, timedelta

CLOCK_OFFSET_ENV = "RECOLLECT_CLOCK_OFFSET"
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_OFFSET = re.compile(r"^\s*([+-]?\d+(?:\.\d+)?)\s*([smhd]?)\s*$")


def parse_offset(text: str) -> timedelta:
    """`"3d"`, `"72h"`, `"-90m"`, `"3600"` (seconds) → a timedelta."""
    match = _OFFSET.match(text)
    if not match:
        raise ValueError(
            f"{CLOCK_OFFSET_ENV} must be a number with an optional unit s, m, h or d "
            f"(e.g. 3d), got {text!r}"
        )
    amount, unit = match.groups()
    return timedelta(seconds=float(amount) * _UNITS[unit or "s"])


def offset() -> timedelta:
    """The configured shift (zero when unset)."""
    raw = os.environ.get(CLOCK_OFFSET_ENV, "")
    return parse_offset(raw) if raw.strip() else timedelta(0)


def now() -> datetime:
    """Timezone-aware UTC time as this process sees it."""
    return datetime.now(UTC) + offset()
