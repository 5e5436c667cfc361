"""What a dated plan will replace: the live facts of the slot it fills, ended on its day.

A plan rarely says its slot the way a present fact does ("Next month I'm moving to Oslo" has no
"lives in"), so a small table of the verbs of moving and of starting a job, in the languages
`recollect.longterm.cues` knows, names the slot when the extractor did not.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from recollect.longterm.cues import says_addition
from recollect.longterm.records import FactCategory
from recollect.longterm.subjects import is_multi_valued, normalise_subject

PLAN_KEY = "plan"
"""Metadata flag of a statement about a plan (`valid_from` says when it starts, if known)."""

_SLOT_WORDS = {
    "location": (
        r"\bmov(e|es|ing) (to|back)\b", r"\brelocat", r"\bzieh(t|e|en)\b", r"\bumzieh",
        r"\bdéménag", r"\bs'installer\b", r"\bmudar", r"\bmudo\b", r"\bvou morar\b",
        r"\btrasferir", r"\btrasferisc", r"引っ越", r"に住む",
    ),
    "employer": (
        r"\bjoin(s|ing)?\b", r"\bstart(s|ing)? (at|with)\b", r"\bwork(s|ing)? (at|for)\b",
        r"\banfangen bei\b", r"\bbeginn\w* bei\b", r"\barbeit\w* bei\b", r"\brejoindre\b",
        r"\btravaill\w* chez\b", r"\bempez\w* en\b", r"\btrabaj\w* en\b", r"\bunirse a\b",
        r"\bcomeç\w* n[oa]\b", r"\btrabalh\w* n[oa]\b", r"\binizi\w* (da|a|in|presso)\b",
        r"\blavor\w* (da|a|in|presso)\b", r"で働", r"に入社",
    ),
}  # fmt: skip
SLOTS = {slot: re.compile("|".join(words), re.IGNORECASE) for slot, words in _SLOT_WORDS.items()}


def plan_subject(text: str) -> str | None:
    """The slot a plan fills, when its verb says so."""
    return next((slot for slot, words in SLOTS.items() if words.search(text)), None)


def held_until_plan(
    text: str,
    subject: str | None,
    category: FactCategory,
    neighbours: Iterable[Mapping[str, Any]],
) -> list[str]:
    """The ids of the live facts a plan replaces on its day: those of its single-valued slot.
    A plan that adds ("also") or fills a slot of many values replaces nothing."""
    if subject is None or is_multi_valued(subject, category) or says_addition(text):
        return []
    return [
        str(n["id"])
        for n in neighbours
        if normalise_subject(n["subject"]) == subject and not n["metadata"].get(PLAN_KEY)
    ]
