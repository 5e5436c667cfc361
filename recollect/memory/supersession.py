"""Deciding, before a write, whether an offered fact repeats, replaces or joins what is known.

The cheap rule runs first: identical wording reinforces; the same subject with another value
supersedes; a near-identical embedding with the same numbers reinforces. Only a related fact
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

log = logging.getLogger(__name__)

_NON_WORD = re.compile(r"\W+")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")

NEAR_DUPLICATE_SIMILARITY = 0.92
"""Cosine above which two same-category facts with the same numbers say the same thing."""
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


def numbers(text: str) -> frozenset[str]:
    """Versions, amounts and dates: a change in any of them is a change of value."""
    return frozenset(_NUMBER.findall(text))


def decide(
    text: str,
    subject: str | None,
    neighbours: Sequence[Neighbour],
    *,
    near_duplicate: float = NEAR_DUPLICATE_SIMILARITY,
    related: float = RELATED_SIMILARITY,
) -> Decision:
    """Apply the cheap rule to the neighbours the write path fetched."""
    wording = normalise(text)
    for n in neighbours:
        if normalise(n.text) == wording:
            return Decision(reinforce=n.id)
    values = numbers(text)

    def paraphrase(n: Neighbour) -> bool:
        return (
            n.similarity is not None
            and n.similarity >= near_duplicate
            and numbers(n.text) == values
        )

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
