"""How recall ranks, in one declarative object: which methods, how they fuse, how age and
confidence weigh, and how many candidates each stage sees. Read this to know how a search ranks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from recollect.longterm.records import FactCategory


class Method(StrEnum):
    """Candidate generators."""

    DENSE = "dense"
    """pgvector cosine distance over the scope's embeddings."""
    LEXICAL = "lexical"
    """Postgres full-text search over the generated tsvector."""


DEFAULT_HALF_LIVES_DAYS: dict[FactCategory, float | None] = {
    FactCategory.PREFERENCE: None,  # a stated preference barely decays: no decay at all
    FactCategory.BIOGRAPHICAL: 3650.0,
    FactCategory.TECHNICAL_STACK: 90.0,  # tools change over months (the React 16 -> 19 case)
    FactCategory.CONSTRAINT: None,  # an allergy does not fade with time
    FactCategory.GOAL: 21.0,  # a short-term goal is irrelevant within weeks
    FactCategory.EVENT: 365.0,
}
"""Recency half-lives per category. With 90 days for the technical stack, "uses React 16"
(240 days old, confidence 0.9, first by relevance) ranks below "moved to React 19" (1 day old,
confidence 0.7, second): 1.114 against 1.136 on the composite below."""


NO_FLOOR = -1.0
"""A `min_similarity` no cosine falls below: every candidate counts."""


@dataclass(frozen=True)
class RecallRecipe:
    """Everything that shapes a recall; the engine reads nothing else."""

    methods: tuple[Method, ...] = (Method.DENSE, Method.LEXICAL)
    dense_limit: int = 50
    lexical_limit: int = 50
    rrf_k: int = 10
    """Small on purpose: per-user lists are short, and k=60 (tuned for web-scale lists) flattens
    the top so much that recency would outvote relevance; k=10 fuses better on LoCoMo too."""
    method_weights: dict[Method, float] = field(
        default_factory=lambda: {Method.DENSE: 1.0, Method.LEXICAL: 0.5}
    )
    half_lives_days: dict[FactCategory, float | None] = field(
        default_factory=lambda: dict(DEFAULT_HALF_LIVES_DAYS)
    )
    relevance_weight: float = 1.0
    recency_weight: float = 0.15
    confidence_weight: float = 0.1
    rerank_limit: int = 0
    """How many fused candidates a reranker re-scores (0: no reranking). Only used when a
    reranker is passed to `rank`; the rest keep their fused order below the reranked ones."""
    rerank_weight: float = 0.9
    """Share of the reranker's opinion in the relevance of reranked candidates (the rest is the
    fused score); both are min-max normalised over the reranked set first. The packaged
    rerankers read query and fact together, so they get most of the say (0.9 beat 0.75 by about
    a point of LoCoMo recall@5 at every pool size from 30 to 60)."""
    min_similarity: float | None = None
    """Relevance floor: unless some candidate shares a word with the query or reaches this
    cosine, the query is off topic and recalls nothing (None: the embedder's measured floor,
    if it has one; `NO_FLOOR`: none)."""
    k: int = 8

    def __post_init__(self) -> None:
        if not self.methods:
            raise ValueError("RecallRecipe.methods must name at least one method")
        for name in ("dense_limit", "lexical_limit", "rrf_k", "rerank_limit", "k"):
            if getattr(self, name) < 0:
                raise ValueError(f"RecallRecipe.{name} must not be negative")
        if not 0.0 <= self.rerank_weight <= 1.0:
            raise ValueError("RecallRecipe.rerank_weight must be between 0 and 1")
        for category, half_life in self.half_lives_days.items():
            if half_life is not None and half_life <= 0:
                raise ValueError(f"half-life of {category} must be positive or None")


@dataclass(frozen=True)
class Candidate:
    """A fact that one or more candidate generators returned, with their raw scores."""

    id: str
    text: str
    category: FactCategory
    confidence: float
    learned_at: datetime
    last_reinforced_at: datetime
    dense_rank: int | None = None
    """1-based position in the dense list, None if the dense list did not return it."""
    similarity: float | None = None
    """Cosine similarity in [-1, 1]."""
    lexical_rank: int | None = None
    lexical_score: float | None = None
    """`ts_rank` of the full-text match."""
