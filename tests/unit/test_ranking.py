"""Ranking is a pure function: fusion, decay, confidence and reranking, without I/O."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from recollect.longterm.ranking import fused_scores, rank, recency
from recollect.longterm.recipe import Candidate, Method, RecallRecipe
from recollect.longterm.records import FactCategory
from recollect.longterm.rerankers import Reranker

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def fact(
    fact_id: str,
    *,
    text: str = "",
    dense: int | None = None,
    lexical: int | None = None,
    days_old: float = 0.0,
    confidence: float = 1.0,
    category: FactCategory = FactCategory.EVENT,
) -> Candidate:
    learned = NOW - timedelta(days=days_old)
    return Candidate(
        id=fact_id,
        text=text or fact_id,
        category=category,
        confidence=confidence,
        learned_at=learned,
        last_reinforced_at=learned,
        dense_rank=dense,
        similarity=None if dense is None else 1.0 - dense / 100,
        lexical_rank=lexical,
        lexical_score=None if lexical is None else 1.0 / lexical,
    )


class KeywordReranker:
    """A real Reranker: scores by how many query words a text contains."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        self.calls.append(list(texts))
        words = set(query.lower().split())
        return [float(len(words & set(t.lower().split()))) for t in texts]


def test_keyword_reranker_satisfies_the_protocol() -> None:
    assert isinstance(KeywordReranker(), Reranker)


def test_fusion_is_weighted_and_normalised() -> None:
    recipe = RecallRecipe(method_weights={Method.DENSE: 1.0, Method.LEXICAL: 0.5}, rrf_k=60)
    both_first, dense_first, lexical_first = fused_scores(
        [fact("a", dense=1, lexical=1), fact("b", dense=1), fact("c", lexical=1)], recipe
    )
    assert both_first == pytest.approx(1.0)
    assert dense_first == pytest.approx(2 / 3)
    assert lexical_first == pytest.approx(1 / 3)


def test_found_by_both_methods_beats_found_by_one() -> None:
    recipe = RecallRecipe(recency_weight=0.0, confidence_weight=0.0)
    ranked = rank("q", [fact("dense-only", dense=1), fact("both", dense=2, lexical=2)], recipe, NOW)
    assert [r.id for r in ranked] == ["both", "dense-only"]
    assert ranked[0].fused > ranked[1].fused


def test_recency_halves_at_the_half_life_and_preferences_do_not_decay() -> None:
    old_goal = fact("g", days_old=21, category=FactCategory.GOAL)
    old_pref = fact("p", days_old=2000, category=FactCategory.PREFERENCE)
    assert recency(old_goal, NOW, 21.0) == pytest.approx(0.5)
    assert recency(old_pref, NOW, None) == 1.0
    future = fact("f", days_old=-3)
    assert recency(future, NOW, 10.0) == 1.0


def test_reinforcement_resets_the_clock() -> None:
    learned = NOW - timedelta(days=365)
    reinforced = Candidate(
        id="r",
        text="r",
        category=FactCategory.EVENT,
        confidence=1.0,
        learned_at=learned,
        last_reinforced_at=NOW,
        dense_rank=1,
    )
    assert recency(reinforced, NOW, 30.0) == 1.0


def test_stale_fact_loses_to_the_fresh_one_of_equal_relevance() -> None:
    stale = fact(
        "react-16",
        text="uses React 16",
        dense=1,
        lexical=2,
        days_old=240,
        confidence=0.9,
        category=FactCategory.TECHNICAL_STACK,
    )
    fresh = fact(
        "react-19",
        text="moved to React 19",
        dense=2,
        lexical=1,
        days_old=1,
        confidence=0.7,
        category=FactCategory.TECHNICAL_STACK,
    )
    ranked = rank("what framework do they use?", [stale, fresh], RecallRecipe(), NOW)
    assert [r.id for r in ranked] == ["react-19", "react-16"]
    assert ranked[0].recency > ranked[1].recency


def test_confidence_breaks_a_tie() -> None:
    ranked = rank(
        "q", [fact("sure", dense=1, confidence=0.9), fact("unsure", dense=1, confidence=0.3)],
        RecallRecipe(methods=(Method.DENSE,)), NOW,
    )  # fmt: skip
    assert [r.id for r in ranked] == ["sure", "unsure"]


def test_reranker_reorders_only_the_head() -> None:
    candidates = [
        fact("a", text="unrelated words", dense=1),
        fact("b", text="the blue guitar", dense=2),
        fact("c", text="blue guitar strings", dense=3),
        fact("d", text="blue guitar blue guitar", dense=4),
    ]
    reranker = KeywordReranker()
    recipe = RecallRecipe(
        methods=(Method.DENSE,), rerank_limit=3, rerank_weight=1.0,
        recency_weight=0.0, confidence_weight=0.0,
    )  # fmt: skip
    ranked = rank("blue guitar", candidates, recipe, NOW, reranker)
    # The reranker reads the head, each fact dated as the prompt shows it.
    assert reranker.calls == [
        ["1 June 2026: unrelated words", "1 June 2026: the blue guitar",
         "1 June 2026: blue guitar strings"]
    ]  # fmt: skip
    assert [r.id for r in ranked] == ["b", "c", "a", "d"]
    assert ranked[0].rerank_score == 2.0
    assert ranked[-1].rerank_score is None


def test_no_reranking_without_a_limit_or_a_reranker() -> None:
    candidates = [fact("a", dense=1), fact("b", dense=2)]
    reranker = KeywordReranker()
    rank("q", candidates, RecallRecipe(rerank_limit=0), NOW, reranker)
    assert reranker.calls == []
    ranked = rank("q", candidates, RecallRecipe(rerank_limit=5), NOW, None)
    assert all(r.rerank_score is None for r in ranked)


def test_every_score_is_carried() -> None:
    (only,) = rank("q", [fact("a", dense=1, days_old=365)], RecallRecipe(), NOW)
    recipe = RecallRecipe()
    expected = (
        recipe.relevance_weight * only.relevance
        + recipe.recency_weight * only.recency
        + recipe.confidence_weight * 1.0
    )
    assert only.score == pytest.approx(expected)
    assert only.recency == pytest.approx(0.5)


def test_empty_candidates_rank_to_nothing() -> None:
    assert rank("q", [], RecallRecipe(rerank_limit=3), NOW, KeywordReranker()) == []


def test_duplicate_ids_are_refused() -> None:
    with pytest.raises(ValueError, match="same candidate id"):
        rank("q", [fact("a", dense=1), fact("a", lexical=1)], RecallRecipe(), NOW)


def test_a_reranker_that_drops_scores_is_refused() -> None:
    class Short:
        def score(self, query: str, texts: Sequence[str]) -> list[float]:
            return [1.0]

    with pytest.raises(ValueError, match="1 scores for 2 texts"):
        rank("q", [fact("a", dense=1), fact("b", dense=2)], RecallRecipe(rerank_limit=2), NOW,
             Short())  # fmt: skip


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"methods": ()}, "at least one method"),
        ({"rerank_limit": -1}, "rerank_limit"),
        ({"rerank_weight": 1.5}, "rerank_weight"),
        ({"half_lives_days": {FactCategory.GOAL: 0.0}}, "half-life"),
    ],
)
def test_bad_recipes_are_refused(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RecallRecipe(**kwargs)  # type: ignore[arg-type]


def test_zero_weights_are_refused() -> None:
    recipe = RecallRecipe(method_weights={Method.DENSE: 0.0, Method.LEXICAL: 0.0})
    with pytest.raises(ValueError, match="zero weight"):
        rank("q", [fact("a", dense=1)], recipe, NOW)


def test_case_5_the_new_stack_fact_wins_with_less_relevance() -> None:
    """Old "uses React 16" (240 days, confidence 0.9) is first in both lists; the new
    "moved to React 19" (1 day, confidence 0.7) second: the default half-life must flip it."""
    old = fact("old", dense=1, lexical=1, days_old=240, confidence=0.9,
               category=FactCategory.TECHNICAL_STACK)  # fmt: skip
    new = fact("new", dense=2, lexical=2, days_old=1, confidence=0.7,
               category=FactCategory.TECHNICAL_STACK)  # fmt: skip
    ranked = rank("what framework do they use?", [old, new], RecallRecipe(), NOW)
    assert ranked[0].fused > ranked[1].fused or ranked[0].id == "new"
    assert [r.id for r in ranked] == ["new", "old"]
    by_id = {r.id: r for r in ranked}
    assert by_id["old"].relevance > by_id["new"].relevance  # unequal, against the winner
    slow = RecallRecipe(half_lives_days={FactCategory.TECHNICAL_STACK: 365.0})
    assert [r.id for r in rank("q", [old, new], slow, NOW)] == ["old", "new"]


def test_constraints_do_not_decay() -> None:
    allergy = fact("a", dense=1, days_old=2000, category=FactCategory.CONSTRAINT)
    assert rank("q", [allergy], RecallRecipe(), NOW)[0].recency == 1.0
