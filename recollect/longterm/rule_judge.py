"""The offline judge: a contradiction decided by rules that can be honest about it.

Asked about one old fact and one new statement, it answers yes only when the words say so:
- the new statement retracts or switches away from a value the old one names (`retracts`);
- both carry numbers that differ and otherwise speak of the same thing ("Laptop budget is 1500
  euros" / "Laptop budget is now 900 euros");
- the new statement says a value changed (`recollect.longterm.cues`) and both are about the
  same slot: the same inferred subject, or a shared word that is not a list's predicate
  ("Writes code in Sublime Text" / "These days codes in Zed": "code").
A plan ("next month") or an addition ("also") is never a contradiction. Without such words it
answers no, so the fact is kept beside the old one: a missed update costs a stale fact, a
wrong one loses a true fact.
"""

from __future__ import annotations

from recollect.longterm.cues import (
    CHANGE,
    CORRECTION,
    RETRACTION,
    says_addition,
    says_change,
    says_plan,
    says_retraction,
)
from recollect.longterm.duplicates import content_words, names, numbers
from recollect.longterm.records import FactCategory
from recollect.longterm.subjects import infer_subject, is_multi_valued
from recollect.longterm.supersession import retracts

LIST_PREDICATES = frozenset(
    {
        "allerg", "allergic", "allergy", "allergi", "allergisch", "allergique", "alérgico",
        "intoleran", "intollerant", "speak", "spricht", "parl", "habla", "fala", "parla", "use",
        "us", "learn", "know", "member", "team", "teammat", "lov", "lik", "enjoy", "play", "has",
        "hav", "own", "certifi", "pet", "work", "wor", "liv", "mak", "get", "got", "main",
        "favourit", "favorit", "prefer", "day", "way", "thing", "one", "lot", "year", "month",
    }
)  # fmt: skip
"""Stems every value of a list (or every fact) shares: sharing one says nothing of a slot."""


def _slot_words(text: str) -> frozenset[str]:
    """Content words with the cue words and numbers taken out."""
    bare = RETRACTION.sub(" ", CORRECTION.sub(" ", CHANGE.sub(" ", text)))
    return frozenset(w for w in content_words(bare) if not w.isdigit()) - LIST_PREDICATES


def _shared_slot_words(old: str, new: str) -> tuple[frozenset[str], frozenset[str], set[str]]:
    """Each side's slot words and those they share, less a first word both open with: the
    one the facts are about ("Caroline ...", "User ..."), which every fact of them shares."""
    old_words, new_words = _slot_words(old), _slot_words(new)
    shared = set(old_words & new_words)
    heads = {content_words(t.split(maxsplit=1)[0]) for t in (old, new) if t.strip()}
    if len(heads) == 1:
        shared -= next(iter(heads))
    return old_words, new_words, shared


def numeric_update(old: str, new: str) -> bool:
    """Both state a number, the numbers differ and the rest speaks of the same thing."""
    old_numbers, new_numbers = numbers(old), numbers(new)
    if not old_numbers or not new_numbers or old_numbers == new_numbers:
        return False
    old_words, new_words, shared = _shared_slot_words(old, new)
    return bool(shared) and len(shared) * 2 >= min(len(old_words), len(new_words))


def same_slot(old: str, new: str) -> bool:
    """Both facts fill one single-valued slot: the same inferred subject, or a shared word
    that is not a list's predicate."""
    subject = infer_subject(new, FactCategory.PREFERENCE)
    if subject is not None and subject == infer_subject(old, FactCategory.PREFERENCE):
        return not is_multi_valued(subject, FactCategory.PREFERENCE)
    return bool(_shared_slot_words(old, new)[2])


def restates(old: str, new: str) -> bool:
    """The new statement repeats the old one's value in other words ("Frontend moved to React
    19" / "Team moved to React 19 last week"): its names (past the first word, which is
    capitalised anyway) and numbers all reappear."""
    _, _, rest = old.partition(" ")
    value = names(rest) | numbers(old)
    return bool(value) and value <= (content_words(new) | numbers(new))


class RuleJudge:
    """`ContradictionJudge` without a model: yes only where the wording says so."""

    def contradicts(self, old: str, new: str) -> bool:
        if says_plan(new):
            return False
        if retracts(new, old):
            return True
        if says_retraction(new):
            return False  # a retraction ends only the value it names
        if says_addition(new) or (restates(old, new) and not CORRECTION.search(new)):
            return False
        if numeric_update(old, new):
            return True
        return says_change(new) and same_slot(old, new)
