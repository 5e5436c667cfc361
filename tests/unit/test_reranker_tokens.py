"""How the packaged rerankers tokenize: one text alone, never through the batch thread pool."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from recollect.longterm.rerankers import _COLBERT, _CROSS_ENCODER, _OnnxModel


class _BatchesCounted:
    """A tokenizer that counts the batches it is handed, one text or many."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.batch_sizes: list[int] = []

    def encode(self, *args: Any) -> Any:
        return self.inner.encode(*args)

    def encode_batch(self, items: list[Any]) -> Any:
        self.batch_sizes.append(len(items))
        return self.inner.encode_batch(items)


@pytest.mark.parametrize(
    ("name", "item"),
    [
        (_COLBERT, "Where does Ana live now?"),
        (_CROSS_ENCODER, ("Where does Ana live now?", "Ana moved to Lisbon.")),
    ],
)
def test_one_input_is_tokenized_alone_and_reads_the_same(
    name: str, item: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = _OnnxModel(name, 64)
    counted = _BatchesCounted(model.tokenizer)
    monkeypatch.setattr(model, "tokenizer", counted)
    alone, alone_mask = model.run([item])
    assert counted.batch_sizes == []
    batched, batched_mask = model.run([item, item])
    assert counted.batch_sizes == [2]
    assert np.array_equal(alone_mask[0], batched_mask[0])
    assert np.allclose(alone[0], batched[0], atol=1e-4)
