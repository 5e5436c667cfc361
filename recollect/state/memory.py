"""Long-term memory records: what is stored, and what a recall returns."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

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
    """Normalised key (e.g. "frontend_framework"); same subject + different value supersedes."""
    confidence: float = Field(default=0.8, ge=0.0, le=1.0)
    source_ids: tuple[str, ...] = ()
    """Message ids or external evidence ids the fact came from (provenance)."""
    learned_at: datetime | None = None
    """When the fact became true or was said; defaults to now."""
    metadata: dict[str, Any] = Field(default_factory=dict)


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
    metadata: dict[str, Any] = Field(default_factory=dict)


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
