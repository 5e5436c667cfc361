"""The ranking the engine runs: weighted RRF, per-category recency, confidence."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from recollect.longterm.ranking import rank
from recollect.longterm.recall import approx_tokens
from recollect.longterm.recipe import Candidate, Method, RecallRecipe
from recollect.longterm.records import FactCategory

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def cand(id_: str, category: FactCategory, age_days: float, conf: float = 0.8,
         dense: int | None = 1, lexical: int | None = None) -> Candidate:  # fmt: skip
    at = NOW - timedelta(days=age_days)
    return Candidate(id_, id_, category, conf, at, at, dense_rank=dense, lexical_rank=lexical)


def test_goals_decay_in_weeks_and_preferences_do_not_decay() -> None:
    ranked = {r.candidate.id: r for r in rank("q", [
        cand("goal", FactCategory.GOAL, 21), cand("pref", FactCategory.PREFERENCE, 2000),
    ], RecallRecipe(), NOW, None)}  # fmt: skip
    assert abs(ranked["goal"].recency - 0.5) < 1e-9
    assert ranked["pref"].recency == 1.0


def test_both_lists_beat_one_and_dense_outweighs_lexical() -> None:
    recipe = RecallRecipe()
    ranked = rank("q", [
        cand("dense", FactCategory.EVENT, 0, dense=1),
        cand("lexical", FactCategory.EVENT, 0, dense=None, lexical=1),
        cand("both", FactCategory.EVENT, 0, dense=2, lexical=2),
    ], recipe, NOW, None)  # fmt: skip
    assert [r.candidate.id for r in ranked] == ["both", "dense", "lexical"]
    lexical_only = RecallRecipe(methods=(Method.LEXICAL,))
    top = rank("q", [cand("d", FactCategory.EVENT, 0, dense=1)], lexical_only, NOW, None)
    assert top[0].fused == 0.0


def test_confidence_breaks_a_relevance_tie() -> None:
    pair = [
        cand("low", FactCategory.EVENT, 0, conf=0.2),
        cand("high", FactCategory.EVENT, 0, conf=0.9),
    ]
    ranked = rank("q", pair, RecallRecipe(), NOW, None)
    assert ranked[0].candidate.id == "high"


def test_token_estimate_grows_with_text() -> None:
    assert approx_tokens("x" * 400) > approx_tokens("x" * 40) > 0
