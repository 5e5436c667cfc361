"""Long-term memory records: what is stored, and what a recall returns."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from enum import StrEnum
from functools import cached_property
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, computed_field, model_validator

FACT_SCHEMA_VERSION = 1


class FactCategory(StrEnum):
    """Default allow-list; each category has its own recency half-life and retention."""

    PREFERENCE = "preference"
    BIOGRAPHICAL = "biographical"
    CONSTRAINT = "constraint"
    GOAL = "goal"
    TECHNICAL_STACK = "technical_stack"
    EVENT = "event"
    """Something that happened at a time (imports and benchmarks use it for observations)."""


class NewFact(BaseModel):
    """A fact as offered to the write path, before dedup, supersession and embedding."""

    model_config = ConfigDict(frozen=True)

    text: str = Field(min_length=1, max_length=2000)
    category: FactCategory
    subject: str | None = Field(default=None, max_length=200)
    """What the fact is about (e.g. "frontend_framework"), normalised on write
    (`recollect.longterm.subjects`); None lets the write path infer it from the wording. A new
    value of a single-valued subject supersedes the old; a multi-valued one keeps both."""
    confidence: float = Field(default=0.8, ge=0.0, le=1.0)
    source_ids: tuple[str, ...] = ()
    """Message ids or external evidence ids the fact came from (provenance)."""
    learned_at: datetime | None = None
    """When the fact became true or was said; defaults to now."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    replaces: tuple[str, ...] = ()
    """Ids of stored facts this one updates, when the caller already decided (an extractor
    that saw them); ids that are not live facts of the scope are ignored."""


class StoredFact(BaseModel):
    """A fact as persisted."""

    model_config = ConfigDict(frozen=True)

    id: str
    org_id: str
    user_id: str
    session_id: str | None
    category: FactCategory
    subject: str | None
    text: str
    confidence: float
    source_ids: tuple[str, ...]
    learned_at: datetime
    last_reinforced_at: datetime
    superseded_by: str | None = None
    deleted_at: datetime | None = None
    valid_from: datetime
    """When it becomes true: the moment it was learned, or the day a plan starts."""
    valid_to: datetime | None = None
    """When it stopped being true: its successor's `learned_at`, or the day a plan that
    replaces it starts (None while it holds)."""
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _starts_when_learned(cls, data: Any) -> Any:
        """A row without `valid_from` (an episode read as a fact) began when it was learned."""
        if isinstance(data, dict) and data.get("valid_from") is None:
            return {**data, "valid_from": data.get("learned_at")}
        return data

    @property
    def planned(self) -> bool:
        """It starts after it was learned: a plan whose day has not necessarily come."""
        return self.valid_from > self.learned_at


class RecalledFact(BaseModel):
    """A recall result with every score that ranked it, so ranking can be explained."""

    model_config = ConfigDict(frozen=True)

    fact: StoredFact
    score: float
    similarity: float | None = None
    lexical: float | None = None
    fused: float | None = None
    rerank: float | None = None
    recency: float = 1.0


class RememberAction(StrEnum):
    """What the write path did with an offered fact."""

    INSERTED = "inserted"
    REINFORCED = "reinforced"
    """An exact or near duplicate: the old fact's confidence and `last_reinforced_at` rose."""
    SUPERSEDED = "superseded"
    """Inserted, and the contradicted facts now point at it through `superseded_by`."""
    INSERTED_STALE = "inserted_stale"
    """Inserted already superseded: a newer fact on the same subject was known."""


class RememberResult(BaseModel):
    """The outcome of one `remember`: the live fact, and the facts it replaced."""

    model_config = ConfigDict(frozen=True)

    action: RememberAction
    fact: StoredFact
    replaced: tuple[str, ...] = ()
    decided_by: str = "rule"
    """`rule` (text, subject, similarity) or `model` (the structured yes/no of a judge)."""


class ProfileEntry(BaseModel):
    """One always-recalled attribute of a user (name, role, locale, ...)."""

    model_config = ConfigDict(frozen=True)

    key: str = Field(min_length=1, max_length=200)
    value: str = Field(min_length=1, max_length=2000)
    confidence: float = Field(default=0.9, ge=0.0, le=1.0)
    updated_at: datetime | None = None


class NewEpisode(BaseModel):
    """A summary of something that happened (a session, a task), recalled like a fact."""

    model_config = ConfigDict(frozen=True)

    summary: str = Field(min_length=1, max_length=8000)
    occurred_at: datetime | None = None
    source_ids: tuple[str, ...] = ()
    metadata: dict[str, Any] = Field(default_factory=dict)


class RecalledEpisode(BaseModel):
    """An episode chosen by recall, with its score."""

    model_config = ConfigDict(frozen=True)

    id: str
    summary: str
    occurred_at: datetime
    score: float
    similarity: float | None = None
    lexical: float | None = None
    recency: float = 1.0


class RecallCandidate(BaseModel):
    """One candidate recall weighed, kept or not, so a trace can say why it was (not) shown."""

    model_config = ConfigDict(frozen=True)

    id: str
    kind: str
    """`fact` or `episode`."""
    text: str
    dense_rank: int | None = None
    lexical_rank: int | None = None
    rerank: float | None = None
    recency: float = 1.0
    confidence: float = 1.0
    score: float = 0.0
    kept: bool = False
    dropped: str | None = None
    """Why it was left out: `budget` (tokens), `limit` (`k`), `duplicate` (the profile shows
    it) or `floor` (the query is off topic); None when kept."""


class Recollection(BaseModel):
    """Everything one recall returns, in the order it should be shown."""

    model_config = ConfigDict(frozen=True)

    profile: tuple[ProfileEntry, ...] = ()
    facts: tuple[RecalledFact, ...] = ()
    episodes: tuple[RecalledEpisode, ...] = ()
    tokens: int = 0
    """Approximate tokens of everything returned; never above the requested budget."""
    _weigh: Callable[[], tuple[RecallCandidate, ...]] | None = PrivateAttr(default=None)

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def candidates(self) -> tuple[RecallCandidate, ...]:
        """Every ranked candidate, best first, with why it was kept or dropped (for traces).
        Built on first read (a recall weighs about a hundred, and most callers never ask), and
        by `model_dump`, which lists it with the fields."""
        return self._weigh() if self._weigh is not None else ()

    def weighed_by(self, weigh: Callable[[], tuple[RecallCandidate, ...]]) -> Recollection:
        """This recollection, its `candidates` to be built by `weigh` when first read."""
        self._weigh = weigh
        return self

    def __eq__(self, other: object) -> bool:
        """Equal when everything returned is, candidates included; not how they are built."""
        if not isinstance(other, Recollection):
            return NotImplemented
        return self._compared() == other._compared()

    def __hash__(self) -> int:
        return hash(self._compared())

    def _compared(self) -> tuple[Any, ...]:
        return (self.profile, self.facts, self.episodes, self.tokens, self.candidates)
