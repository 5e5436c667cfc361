"""The sign-codes benchmark tells an embedder whose vectors share their signs from one whose
vectors do not, and what taking the mean away gives back."""

from __future__ import annotations

import numpy as np

from bench.sign_codes import hamming, measure


def test_hamming_counts_the_signs_that_differ() -> None:
    queries = np.asarray([[1.0, -1.0, 1.0]], dtype=np.float32)
    facts = np.asarray([[1.0, -1.0, 1.0], [-1.0, 1.0, 1.0], [-1.0, 1.0, -1.0]], dtype=np.float32)
    assert hamming(queries, facts).tolist() == [[0.0, 2.0, 3.0]]


def test_a_narrow_cone_spreads_little_until_its_mean_is_taken_away() -> None:
    rng = np.random.default_rng(1)
    cone = (1.0 + 0.2 * rng.standard_normal((2050, 32))).astype(np.float32)
    narrow = measure(cone[2000:], cone[:2000])
    assert narrow["spread_raw"] < 0.1
    assert narrow["spread_centred"] > 0.4
    for user in narrow["users"]:
        assert user["centred"] > user["raw"]


def test_random_directions_spread_by_half_and_keep_their_nearest() -> None:
    rng = np.random.default_rng(2)
    directions = rng.standard_normal((2050, 32)).astype(np.float32)
    wide = measure(directions[2000:], directions[:2000])
    assert 0.45 < wide["spread_raw"] < 0.55
    assert wide["users"][0]["raw"] > 0.5
