"""What the chat shows of its background memory work: one short line between turns.

The worker runs in a thread while the user types; anything it printed would land over the
`you>` prompt. So its log goes to a file (`RECOLLECT_LOG_FILE`, default `recollect.log` in the
data folder), its outcomes are collected here, and the REPL prints one summary line before the
next prompt. `/jobs` shows the user's queue in full.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

from recollect.extraction.worker import Outcome
from recollect.store.server import data_dir

LOG_FILE_VARIABLE = "RECOLLECT_LOG_FILE"
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def log_file() -> Path:
    """Where the chat's background work writes its details."""
    configured = os.environ.get(LOG_FILE_VARIABLE)
    return Path(configured).expanduser() if configured else data_dir() / "recollect.log"


def log_to_file(path: Path) -> logging.Handler:
    """Send every log record (and Python warnings) to `path` instead of the terminal."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    root = logging.getLogger()
    for existing in list(root.handlers):  # a console handler would print over the prompt
        if isinstance(existing, logging.StreamHandler) and not isinstance(
            existing, logging.FileHandler
        ):
            root.removeHandler(existing)
    root.addHandler(handler)
    logging.getLogger("recollect").setLevel(logging.INFO)
    logging.captureWarnings(True)
    return handler


class StatusBoard:
    """Outcomes reported by the worker thread, summed up into one line when asked."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._outcomes: list[Outcome] = []

    def record(self, outcome: Outcome) -> None:
        """The worker's `on_outcome` callback (runs in the worker thread)."""
        with self._lock:
            self._outcomes.append(outcome)

    def take_line(self) -> str | None:
        """One line for everything since the last call; None when nothing happened."""
        with self._lock:
            outcomes, self._outcomes = self._outcomes, []
        return summary_line(outcomes)


def summary_line(outcomes: list[Outcome]) -> str | None:
    """`memory: 2 facts stored, 1 for review` — plus, at most, the first parked job's hint."""
    if not outcomes:
        return None
    stored = sum(o.stored for o in outcomes)
    review = sum(o.review for o in outcomes)
    parts = [f"{stored} fact{'' if stored == 1 else 's'} stored"] if stored or not review else []
    if review:
        parts.append(f"{review} for review")
    parked = [o for o in outcomes if o.parked]
    failed = [o for o in outcomes if o.error and not o.parked]
    if failed:
        parts.append(f"{len(failed)} job(s) failed and will be retried (/jobs)")
    if parked:
        first = parked[0]
        more = f" (+{len(parked) - 1} more)" if len(parked) > 1 else ""
        parts = [p for p in parts if not p.startswith("0 facts")]
        parts.append(f"job {first.job_id} parked{more}: {first.error}")
    return "memory: " + ", ".join(parts)
