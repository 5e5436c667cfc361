"""The MaxSim product: the plain matrix product, computed in chunks that keep OpenBLAS on the
calling thread, for any head and query shape."""

from __future__ import annotations

import numpy as np
import pytest

from recollect.longterm.rerankers import (
    _BLAS_SINGLE_THREAD_MACS,
    _CHUNK_ROWS,
    _QUERY_TOKENS,
    _chunk_rows,
    _single_threaded_product,
    _stacked_with_spare_rows,
)

DIM = 384


@pytest.mark.parametrize("query_tokens", range(1, _QUERY_TOKENS + 1))
def test_every_chunk_stays_under_the_single_thread_bound(query_tokens: int) -> None:
    rows = _chunk_rows(query_tokens, DIM)
    assert 1 <= rows <= _CHUNK_ROWS
    assert rows * query_tokens * DIM <= _BLAS_SINGLE_THREAD_MACS


@pytest.mark.parametrize("seed", range(40))
def test_the_chunked_product_equals_the_plain_product(seed: int) -> None:
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 120, size=int(rng.integers(1, 60)))
    facts = [rng.standard_normal((int(n), DIM)).astype(np.float32) for n in lengths]
    query_tokens = int(rng.integers(1, _QUERY_TOKENS + 1))
    query = rng.standard_normal((query_tokens, DIM)).astype(np.float32)
    stacked = _stacked_with_spare_rows(facts)
    rows = int(lengths.sum())

    product = _single_threaded_product(stacked, rows, query)

    assert product.shape == (rows, len(query))
    np.testing.assert_allclose(product, np.concatenate(facts) @ query.T, rtol=1e-4, atol=1e-4)


def test_one_fact_of_one_token_is_scored() -> None:
    fact = np.ones((1, DIM), dtype=np.float32)
    product = _single_threaded_product(_stacked_with_spare_rows([fact]), 1, fact)
    assert product.tolist() == [[float(DIM)]]
