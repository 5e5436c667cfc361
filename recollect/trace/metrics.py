"""Memory metrics drawn from traces, cheap and without a model: history tokens per turn,
recall hit rate, extraction yield and rejections, supersessions, review depth, checkpoint
bytes."""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from typing import Any

from recollect.trace.store import TraceRow

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
MIN_WORD_CHARS = 3
USED_OVERLAP = 0.5
"""A recalled item counts as used when half of its content words appear in the reply."""
_STOP_WORDS = (
    "the and for are was were has have had with that this from you your user their they "
    "but not all any can will would about into over than then them its his her she him"
)
_STOP = frozenset(_STOP_WORDS.split())


def content_words(text: str) -> set[str]:
    """Lower-cased words of three characters or more, without the commonest English ones."""
    return {w for w in (m.lower() for m in _WORD.findall(text)) if len(w) >= MIN_WORD_CHARS} - _STOP


def used_items(reply: str, items: Sequence[tuple[str, str]]) -> list[str]:
    """The ids of recalled `(id, text)` items the reply drew on: it cites the item's short id
    (`m:` and the id's last eight characters, as the prompt shows it), or shares at least
    `USED_OVERLAP` of the item's content words (the fallback)."""
    said = content_words(reply)
    used = []
    for item_id, text in items:
        words = content_words(text)
        cited = f"m:{item_id[-8:]}" in reply
        if cited or (words and len(words & said) / len(words) >= USED_OVERLAP):
            used.append(item_id)
    return used


def _median(values: Sequence[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


def summarise(rows: Sequence[TraceRow], counts: dict[str, int]) -> dict[str, Any]:
    """The figures `recollect stats` prints, from a user's traces and live counts."""
    turns = [r for r in rows if r.kind == "turn"]
    jobs = [r for r in rows if r.kind == "extraction"]
    history = [float(r.trace.get("tokens", {}).get("history", 0)) for r in turns]
    shown = sum(len(r.trace.get("metrics", {}).get("recalled_shown", [])) for r in turns)
    used = sum(len(r.trace.get("metrics", {}).get("recalled_used", [])) for r in turns)
    verdicts = [f.get("verdict", "") for r in jobs for f in r.trace.get("facts", [])]
    kept = sum(v in ("stored", "merged", "superseded") for v in verdicts)
    latest: dict[str, int] = {}
    for r in turns:
        if r.checkpoint_bytes is not None:
            latest[r.thread_id] = r.checkpoint_bytes
    return {
        "turns": len(turns),
        "threads": len({r.thread_id for r in turns}),
        "history_tokens_p50": _median(history),
        "history_tokens_max": max(history, default=None),
        "recalled_shown": shown,
        "recalled_used": used,
        "recall_hit_rate": round(used / shown, 3) if shown else None,
        "extraction_jobs": len(jobs),
        "candidate_facts": len(verdicts),
        "extraction_yield": round(kept / len(verdicts), 3) if verdicts else None,
        "rejection_rate": (
            round(verdicts.count("rejected") / len(verdicts), 3) if verdicts else None
        ),
        "supersessions": counts.get("supersessions", 0),
        "review_queue": counts.get("review_queue", 0),
        "checkpoint_bytes_per_thread_p50": _median([float(v) for v in latest.values()]),
        "checkpoint_bytes_per_thread_max": max(latest.values(), default=None),
    }
