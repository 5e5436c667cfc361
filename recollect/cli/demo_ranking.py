"""The demo's ranking section: how recall orders what it found, with every score shown.

It ranks a handful of remembered facts for one question with the real embedder and the real
`rank`, so a user sees relevance, recency (per-category half-life) and confidence combine.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

from recollect.longterm.ranking import rank
from recollect.longterm.recipe import Candidate, Method, RecallRecipe
from recollect.longterm.records import FactCategory
from recollect.models.embeddings import describe_embeddings, init_embeddings

QUESTION = "Which frontend framework does Dana's team use?"
FACTS: tuple[tuple[str, FactCategory, float, int], ...] = (
    ("Dana's team uses React 16 for the dashboard frontend.", FactCategory.TECHNICAL_STACK,
     0.9, 240),
    ("Dana's team now uses React 19 for the dashboard frontend.", FactCategory.TECHNICAL_STACK,
     0.7, 1),
    ("Dana prefers short answers and never wants jQuery suggested.", FactCategory.PREFERENCE,
     0.9, 30),
    ("Dana's team deploys to Kubernetes on GCP.", FactCategory.TECHNICAL_STACK, 0.9, 30),
    ("Dana leads the payments team.", FactCategory.BIOGRAPHICAL, 0.9, 30),
)  # fmt: skip


def show_ranking() -> None:
    """Print the ranked facts for `QUESTION`, best first, with their scores."""
    print(describe_embeddings())
    embedder = init_embeddings()
    now = datetime.now(UTC)
    texts = [text for text, *_ in FACTS]
    if embedder is not None:
        query = embedder.embed_query(QUESTION)
        vectors = embedder.embed_documents(texts)
        similarity = [math.fsum(a * b for a, b in zip(query, v, strict=True)) for v in vectors]
        order = sorted(range(len(texts)), key=lambda i: -similarity[i])
        dense_rank = {i: position + 1 for position, i in enumerate(order)}
        recipe = RecallRecipe(methods=(Method.DENSE,), k=3)
    else:
        similarity = [0.0] * len(texts)
        dense_rank = {i: i + 1 for i in range(len(texts))}
        recipe = RecallRecipe(k=3)
    candidates = [
        Candidate(
            id=f"fact-{i}",
            text=text,
            category=category,
            confidence=confidence,
            learned_at=now - timedelta(days=age),
            last_reinforced_at=now - timedelta(days=age),
            dense_rank=dense_rank[i],
            similarity=similarity[i],
        )
        for i, (text, category, confidence, age) in enumerate(FACTS)
    ]
    print(f'recall for "{QUESTION}" (top {recipe.k} of {len(candidates)}):')
    print("  (ranking weighs age but keeps both React facts; retiring the stale one is")
    print("   supersession's job, at write time)")
    print(f"  {'score':>6} {'relev.':>6} {'recency':>7} {'conf.':>5}  fact")
    for item in rank(QUESTION, candidates, recipe, now)[: recipe.k]:
        c = item.candidate
        age = (now - c.learned_at).days
        print(
            f"  {item.score:6.3f} {item.relevance:6.3f} {item.recency:7.3f} {c.confidence:5.2f}"
            f"  {c.text} ({c.category}, {age} days old)"
        )
