"""Deciding, before a write, whether an offered fact repeats, replaces or joins what is known.

The cheap rule runs first: identical wording reinforces; a repeat (an embedding within the
embedder's near-duplicate threshold and words that add nothing: `recollect.longterm.duplicates`)
reinforces; the same single-valued subject with another value supersedes; a retraction or
switch that names an old value ("no longer", "switched from", "nicht mehr") supersedes that
value. A value added to a multi-valued subject (allergies, languages, tools:
`recollect.longterm.subjects`) never replaces the others unless the statement says a value
changed (`recollect.longterm.cues`); a plan ("next month", "will") ends nothing yet.

Anything else goes to a judge, chosen as candidates without needing a shared subject key:
neighbours of the same subject, then of the same category, then by embedding similarity
(`candidates`), at most `JUDGE_LIMIT` of them. The judge is a model's structured yes/no
whenever a chat model is configured, and the offline rule (`recollect.longterm.rule_judge`)
otherwise (`recollect.longterm.configured`).
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, Field

from recollect.longterm.cues import says_addition, says_change, says_plan
from recollect.longterm.duplicates import (
    UNKNOWN_EMBEDDER_SIMILARITY,
    content_words,
    is_repeat,
    names,
)
from recollect.longterm.duplicates import numbers as numbers  # part of this module's interface

log = logging.getLogger(__name__)

_NON_WORD = re.compile(r"\W+")

NEAR_DUPLICATE_SIMILARITY = UNKNOWN_EMBEDDER_SIMILARITY
"""Cosine from which a fact may repeat another when the caller does not say (the write path
passes its embedder's own: `near_duplicate_similarity`)."""
RELATED_SIMILARITY = 0.3
"""Cosine above which an unplaceable neighbour is worth asking the judge about."""
JUDGE_LIMIT = 3
"""At most this many judge calls per write (the candidates most likely to share a slot)."""


class Verdict(StrEnum):
    """What to do with the offered fact."""

    INSERT = "insert"
    REINFORCE = "reinforce"
    SUPERSEDE = "supersede"
    ASK = "ask"


@dataclass(frozen=True)
class Neighbour:
    """An existing live fact of the same scope, as the decision sees it."""

    id: str
    text: str
    subject: str | None
    similarity: float | None
    category: str | None = None


@dataclass(frozen=True)
class Decision:
    """The rule's answer: a verdict per neighbour that matters."""

    reinforce: str | None = None
    supersede: tuple[str, ...] = ()
    ask: tuple[Neighbour, ...] = ()


def normalise(text: str) -> str:
    """Case, punctuation and spacing do not make a new fact."""
    return _NON_WORD.sub(" ", text.lower()).strip()


_CHANGE = re.compile(
    r"\b(no longer|any ?more|stopped|quit|switched|changed|moved (away )?from|replaced|"
    r"instead of|rather than|gave up|dropped|outgrew|used to|formerly|previously|ex-|"
    r"nicht mehr|kein\w* .*\bmehr|gewechselt|statt|anstatt|ne \w+ plus|n'\w+ plus|"
    r"au lieu de|a arrêté|ya no|dejó de|en lugar de|en vez de|cambió|"
    r"forget|vergiss|oublie|olvida|esquece|dimentica|turns out|after all|doch nicht|"
    r"cancel+ed|gekündigt|résilié|cancel[óé]|cancelou|disdetto|"
    r"já não|não \w+ mais|deixou de|non \w+ più|invece di|em vez de|"
    r"resulta que no|en realidad no|na verdade não|in realtà non|herausgestellt)"
    r"|忘れて|やめた|解約|もう",  # no word boundaries in Japanese
    re.IGNORECASE,
)
"""Words that say a value ended or was swapped: only these retract one value of a list."""
_GENERIC = frozenset(
    {"allerg", "allergic", "allergy", "speak", "speaks", "use", "like", "lov", "prefer",
     "work", "liv", "drink", "team", "member", "know", "learn", "fluent", "intoleran",
     "longer", "switch", "mov", "replac", "instead", "stopp", "chang", "from", "lik",
     "spricht", "parle", "habla", "mehr", "plus", "nicht", "forget", "turn", "out", "after",
     "fala", "parla", "has", "hav", "that", "i", "am", "not", "mais", "più", "play",
     "allergique", "allergisch", "alérgico", "alergia", "allergico", "spielt", "joue",
     "juega", "toca", "suona", "hat", "ha", "tien", "tem", "intollerant", "verträgt",
     "es", "è", "est", "ist", "é", "al"}
)  # fmt: skip
"""Predicate stems shared by every value of a list; a retraction must name the value itself."""


def retracts(new: str, old: str, predicates: frozenset[str] = frozenset()) -> bool:
    """`new` ends or swaps out the value `old` states ("No longer allergic to peanuts" ends
    "Allergic to peanuts"; "Allergic to shellfish" ends nothing). `predicates`: words the
    caller saw shared by several known facts ("toca" in "Toca violão" and "Toca bateria"),
    which name no value of their own."""
    if not _CHANGE.search(new):
        return False
    value = (content_words(old) | names(old)) - _GENERIC - predicates
    return bool(value & content_words(new))


def shared_predicates(texts: Sequence[str]) -> frozenset[str]:
    """Words found in more than one of `texts`: the predicate of a list ("Hat ein Abo bei
    Spotify", "Hat ein Abo bei Netflix": "hat", "abo"), in any language."""
    counts = Counter(w for t in texts for w in content_words(t) | names(t))
    return frozenset(w for w, n in counts.items() if n > 1)


def decide(
    text: str,
    subject: str | None,
    neighbours: Sequence[Neighbour],
    *,
    multi_valued: bool = False,
    near_duplicate: float = NEAR_DUPLICATE_SIMILARITY,
    related: float = RELATED_SIMILARITY,
    category: str | None = None,
) -> Decision:
    """Apply the cheap rule to the neighbours the write path fetched.

    `near_duplicate` is the cosine from which a neighbour may be the same fact; the words
    must agree as well (`recollect.longterm.duplicates.says_nothing_new`). On a multi-valued
    subject a new value joins the others: a retraction or switch that names an old value
    (`retracts`) replaces it, and the judge is asked about the list only when the statement
    says a value changed or carries a number (a budget, a target). `category`: the new
    fact's, so candidates of the same category are asked first."""
    wording = normalise(text)
    for n in neighbours:
        if normalise(n.text) == wording:
            return Decision(reinforce=n.id)

    def paraphrase(n: Neighbour) -> bool:
        return is_repeat(text, n.text, n.similarity, near_duplicate)

    same_subject = [n for n in neighbours if subject and n.subject == subject]
    if same_subject:
        repeated = next((n for n in same_subject if paraphrase(n)), None)
        if repeated is not None:
            return Decision(reinforce=repeated.id)
        if not multi_valued and not says_plan(text) and not says_addition(text):
            return Decision(supersede=tuple(dict.fromkeys(n.id for n in same_subject)))
    for n in neighbours:
        if paraphrase(n) and not (subject and n.subject and n.subject != subject):
            return Decision(reinforce=n.id)
    predicates = shared_predicates([n.text for n in neighbours])
    ended = tuple(dict.fromkeys(n.id for n in neighbours if retracts(text, n.text, predicates)))
    if ended:
        return Decision(supersede=ended)
    if says_plan(text):
        return Decision()  # a plan is kept beside what is true until it happens
    if multi_valued and subject and not says_change(text) and not numbers(text):
        return Decision()
    related_ones = [n for n in neighbours if n.similarity is None or n.similarity >= related]
    return Decision(ask=candidates(subject, category, related_ones)[:JUDGE_LIMIT])


def candidates(
    subject: str | None, category: str | None, neighbours: Sequence[Neighbour]
) -> tuple[Neighbour, ...]:
    """The neighbours most likely to hold the same slot, best first: the same subject, then
    the same category the extractor gave, then the closest embedding. No shared subject key
    is needed, so a fact in any language, or one whose subject a model named another way,
    still reaches the judge."""

    def rank(n: Neighbour) -> tuple[bool, bool, float]:
        return (
            bool(subject) and n.subject == subject,
            bool(category) and n.category == category,
            n.similarity if n.similarity is not None else 0.0,
        )

    return tuple(sorted(neighbours, key=rank, reverse=True))


class ContradictionJudge(Protocol):
    """Decides whether a new statement makes an old one no longer true."""

    def contradicts(self, old: str, new: str) -> bool: ...


class Contradiction(BaseModel):
    """Structured output of the judge."""

    contradicts: bool = Field(
        description="true if the new statement makes the old one no longer true"
    )


JUDGE_PROMPT = (
    "Two statements about the same user were recorded at different times.\n"
    "Old: {old}\nNew: {new}\n"
    "Does the new statement make the old one no longer true (a changed value, a reversed "
    "preference, a replaced tool, a new home, a new manager)? Answer false if both can be "
    "true at once: one more allergy, language, tool or team member adds to a list and "
    "replaces nothing."
)


class ModelJudge:
    """A chat model's structured yes/no; a failed call counts as 'no' so nothing is lost."""

    def __init__(self, model: BaseChatModel) -> None:
        self._ask = model.with_structured_output(Contradiction)

    def contradicts(self, old: str, new: str) -> bool:
        try:
            answer = self._ask.invoke(JUDGE_PROMPT.format(old=old, new=new))
        except Exception as exc:  # a judge outage must not drop the fact being written
            log.warning("contradiction judge failed (%s); keeping both facts", exc)
            return False
        if isinstance(answer, Contradiction):
            return answer.contradicts
        if isinstance(answer, dict):
            return bool(answer.get("contradicts", False))
        return False
