"""Deciding, before a write, whether an offered fact repeats, replaces or joins what is known.

The cheap rule runs first: identical wording reinforces; the same subject with another value
supersedes; a repeat (an embedding within the embedder's near-duplicate threshold and words
that add nothing: `recollect.longterm.duplicates`) reinforces. Only a related fact
that the rule cannot place (no shared subject to compare) goes to a judge: a model's
structured yes/no.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, Field

from recollect.longterm.duplicates import UNKNOWN_EMBEDDER_SIMILARITY, is_repeat
from recollect.longterm.duplicates import numbers as numbers  # part of this module's interface

log = logging.getLogger(__name__)

_NON_WORD = re.compile(r"\W+")

NEAR_DUPLICATE_SIMILARITY = UNKNOWN_EMBEDDER_SIMILARITY
"""Cosine from which a fact may repeat another when the caller does not say (the write path
passes its embedder's own: `near_duplicate_similarity`)."""
RELATED_SIMILARITY = 0.3
"""Cosine above which an unplaceable neighbour is worth asking the judge about."""
JUDGE_LIMIT = 2
"""At most this many model calls per write."""


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


@dataclass(frozen=True)
class Decision:
    """The rule's answer: a verdict per neighbour that matters."""

    reinforce: str | None = None
    supersede: tuple[str, ...] = ()
    ask: tuple[Neighbour, ...] = ()


def normalise(text: str) -> str:
    """Case, punctuation and spacing do not make a new fact."""
    return _NON_WORD.sub(" ", text.lower()).strip()


def decide(
    text: str,
    subject: str | None,
    neighbours: Sequence[Neighbour],
    *,
    near_duplicate: float = NEAR_DUPLICATE_SIMILARITY,
    related: float = RELATED_SIMILARITY,
) -> Decision:
    """Apply the cheap rule to the neighbours the write path fetched.

    `near_duplicate` is the cosine from which a neighbour may be the same fact; the words
    must agree as well (`recollect.longterm.duplicates.says_nothing_new`)."""
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
        return Decision(supersede=tuple(dict.fromkeys(n.id for n in same_subject)))
    for n in neighbours:
        if paraphrase(n) and not (subject and n.subject and n.subject != subject):
            return Decision(reinforce=n.id)
    unplaceable = tuple(
        n
        for n in neighbours
        if not (subject and n.subject)  # two subjects that differ already answer the question
        and (n.similarity is None or n.similarity >= related)
    )
    return Decision(ask=unplaceable[:JUDGE_LIMIT])


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
    "preference, a replaced tool)? Answer false if both can be true at once."
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
