"""Ranking recall candidates: one pure function, so the same code ranks in the engine, the
benchmark and the unit tests.

Stages, each read from the `RecallRecipe`:
1. reciprocal rank fusion of the candidate lists, weighted per method and normalised to [0, 1]
   by the best score a fact could get (first in every list);
2. optional re-scoring of the fused top `rerank_limit` by a `Reranker`, which reads each fact
   dated as the prompt shows it (`rerank.rerank_text`);
3. a composite with recency (`0.5 ** (age_days / half_life)`, half-life per category) and
   confidence, so a fresh fact beats a stale one of equal relevance.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from recollect.longterm.language import reads_as
from recollect.longterm.recipe import Candidate, Method, RecallRecipe
from recollect.longterm.rerankers import Reranker, rerank_text

_SECONDS_PER_DAY = 86_400.0


@dataclass(frozen=True)
class Ranked:
    """A candidate with every score that placed it, so callers and logs can explain a recall."""

    candidate: Candidate
    score: float
    """The final composite; results are sorted by it."""
    fused: float
    """Weighted reciprocal rank fusion, normalised to [0, 1]."""
    relevance: float
    """`fused`, or the blend of fused and reranker scores for reranked candidates."""
    recency: float
    """`0.5 ** (age_days / half_life)`; 1.0 for categories that do not decay."""
    rerank_score: float | None = None
    """The reranker's raw score, when the candidate was reranked."""

    @property
    def id(self) -> str:
        return self.candidate.id


def recency(candidate: Candidate, now: datetime, half_life_days: float | None) -> float:
    """Exponential decay since the fact was last learned or reinforced; never above 1."""
    if half_life_days is None:
        return 1.0
    latest = max(candidate.learned_at, candidate.last_reinforced_at)
    age_days = max(0.0, (now - latest).total_seconds() / _SECONDS_PER_DAY)
    return float(0.5 ** (age_days / half_life_days))


def fused_scores(candidates: Sequence[Candidate], recipe: RecallRecipe) -> list[float]:
    """Weighted reciprocal rank fusion, divided by its maximum so it reads as a share."""
    weights = {method: recipe.method_weights.get(method, 0.0) for method in recipe.methods}
    best = sum(weight / (recipe.rrf_k + 1) for weight in weights.values())
    if best <= 0:
        raise ValueError("RecallRecipe.method_weights give every method a zero weight")
    scores = []
    for candidate in candidates:
        total = 0.0
        for method, weight in weights.items():
            position = _rank_in(candidate, method)
            if position is not None:
                total += weight / (recipe.rrf_k + position)
        scores.append(total / best)
    return scores


def rank(
    query: str,
    candidates: Sequence[Candidate],
    recipe: RecallRecipe,
    now: datetime,
    reranker: Reranker | None = None,
) -> list[Ranked]:
    """All candidates, best first (callers cut to `recipe.k`); duplicate ids are an error."""
    ids = [candidate.id for candidate in candidates]
    if len(set(ids)) != len(ids):
        raise ValueError("rank() got the same candidate id twice; merge the lists first")
    fused = fused_scores(candidates, recipe)
    order = sorted(range(len(candidates)), key=lambda i: (-fused[i], ids[i]))
    relevance = list(fused)
    # Everything that needs no reranker score comes first: a reranker still encoding the
    # query in the background finishes meanwhile.
    decays = [recency(c, now, recipe.half_lives_days.get(c.category)) for c in candidates]
    raw_rerank: dict[int, float] = {}
    if reranks(query, reranker, recipe) and reranker is not None and candidates:
        head = order[: recipe.rerank_limit]
        scores = reranker.score(
            query, [rerank_text(candidates[i].text, candidates[i].learned_at) for i in head]
        )
        if len(scores) != len(head):
            raise ValueError(f"reranker returned {len(scores)} scores for {len(head)} texts")
        raw_rerank = dict(zip(head, scores, strict=True))
        blended = _blend([fused[i] for i in head], [float(s) for s in scores], recipe.rerank_weight)
        # Reranked candidates stay above the rest: the reranker only reorders the head.
        floor = max((fused[i] for i in order[recipe.rerank_limit :]), default=0.0)
        for i, value in zip(head, blended, strict=True):
            relevance[i] = floor + (1.0 - floor) * value if floor < 1.0 else value
    ranked = []
    for i, (candidate, decay) in enumerate(zip(candidates, decays, strict=True)):
        score = (
            recipe.relevance_weight * relevance[i]
            + recipe.recency_weight * decay
            + recipe.confidence_weight * candidate.confidence
        )
        ranked.append(
            Ranked(
                candidate=candidate,
                score=score,
                fused=fused[i],
                relevance=relevance[i],
                recency=decay,
                rerank_score=raw_rerank.get(i),
            )
        )
    ranked.sort(key=lambda item: (-item.score, item.candidate.id))
    return ranked


def reranks(query: str, reranker: Reranker | None, recipe: RecallRecipe) -> bool:
    """Whether this recall's head is re-scored: a reranker, a head size, and a query in a
    language the reranker reads (`languages`, when it declares them; the fused order of a
    multilingual embedder is better than an English model's guess at German)."""
    if reranker is None or recipe.rerank_limit <= 0:
        return False
    languages = getattr(reranker, "languages", None)
    return languages is None or reads_as(query, languages)


def rerank_head(candidates: Sequence[Candidate], recipe: RecallRecipe) -> list[Candidate]:
    """The fused top `rerank_limit`, in the order `rank` re-scores them."""
    fused = fused_scores(candidates, recipe)
    order = sorted(range(len(candidates)), key=lambda i: (-fused[i], candidates[i].id))
    return [candidates[i] for i in order[: recipe.rerank_limit]]


def _rank_in(candidate: Candidate, method: Method) -> int | None:
    if method is Method.DENSE:
        return candidate.dense_rank
    return candidate.lexical_rank


def _blend(fused: Sequence[float], reranked: Sequence[float], weight: float) -> list[float]:
    """Min-max normalise both over the head and mix them; ties normalise to 1."""
    low_f, high_f = min(fused), max(fused)
    low_r, high_r = min(reranked), max(reranked)
    out = []
    for f, r in zip(fused, reranked, strict=True):
        nf = (f - low_f) / (high_f - low_f) if high_f > low_f else 1.0
        nr = (r - low_r) / (high_r - low_r) if high_r > low_r else 1.0
        out.append((1.0 - weight) * nf + weight * nr)
    return out
