"""A store search's score is a relevance in [0, 1], rising with the cosine, 0.5 at the floor."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from recollect.basestore.relevance import calibrated, cosine, word_coverage

cosines = st.floats(min_value=-1.0, max_value=1.0)
floors = st.floats(min_value=-1.0, max_value=1.0)


@given(cosines, cosines, floors)
def test_the_score_stays_in_range_and_rises_with_the_cosine(a: float, b: float, floor: float):
    low, high = sorted((a, b))
    assert 0.0 <= calibrated(low, floor) <= calibrated(high, floor) <= 1.0


def test_the_floor_is_the_midpoint_and_the_spread_follows_it() -> None:
    assert calibrated(0.78, 0.78) == 0.5
    assert 0.85 < calibrated(0.78 + 0.22 / 4, 0.78) < 0.9  # a quarter of the way to 1
    assert 0.1 < calibrated(0.78 - 0.22 / 4, 0.78) < 0.15
    assert calibrated(0.0, -1.0) == 0.5  # a floor below 0 is taken as 0


def test_word_coverage_and_cosine() -> None:
    assert word_coverage("window seats", "Prefers a window seat") == 1.0
    assert word_coverage("window seat on trains", "Prefers a window seat") == 2 / 3
    assert word_coverage("is it", "anything") == 0.0
    assert cosine([1.0, 0.0], [0.0, 2.0]) == 0.0
    assert cosine([1.0, 0.0], [0.0]) is None
    assert cosine([0.0, 0.0], [1.0, 1.0]) is None
