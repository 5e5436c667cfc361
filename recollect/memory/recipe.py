"""How recall ranks, in one declarative object: which methods, how they fuse, how age and
confidence weigh, and how many candidates each stage sees. Read this to know how a search ranks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from recollect.state.memory import FactCategory


class Method(StrEnum):
    """Candidate generators."""

    DENSE = "dense"
    """pgvector cosine distance over the scope's embeddings."""
    LEXICAL = "lexical"
    """Postgres full-text search over the generated tsvector."""


DEFAULT_HALF_LIVES_DAYS: dict[FactCategory, float | None] = {
    FactCategory.PREFERENCE: None,  # preferences barely decay: no decay at all
    FactCategory.BIOGRAPHICAL: 3650.0,
    FactCategory.TECHNICAL_STACK: 365.0,
    FactCategory.CONSTRAINT: 180.0,
    FactCategory.GOAL: 21.0,
    FactCategory.EVENT: 365.0,
}


@dataclass(frozen=True)
class RecallRecipe:
    """Everything that shapes a recall; the engine reads nothing else."""

    methods: tuple[Method, ...] = (Method.DENSE, Method.LEXICAL)
    dense_limit: int = 50
    lexical_limit: int = 50
    rrf_k: int = 60
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
    """How many fused candidates a reranker re-scores (0: no reranking)."""
    k: int = 8


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
    """`ts_rank_cd` of the full-text match."""
