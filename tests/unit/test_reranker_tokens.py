"""How the packaged rerankers tokenize: one text alone, never through the batch thread pool."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
import pytest

from recollect.longterm.rerankers import (
    _COLBERT,
    _CROSS_ENCODER,
    CrossEncoderReranker,
    LateInteractionReranker,
    _OnnxModel,
    _pair,
)


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


@lru_cache(maxsize=2)
def _model(name: str) -> _OnnxModel:
    return _OnnxModel(name, 32)


TEXTS = [
    "",
    "Wo wohnt Ana jetzt?",
    "安娜现在住在哪里\uff1f",
    "Где живёт Анна?",
    "مرحبا كيف حالك",
    "🎻 cello 🎻",
    "ana@example.com +351 912 345 678",
    "zero\u200bwidth\u200bjoined",
    "x" * 5000,
]


@pytest.mark.parametrize("name", [_COLBERT, _CROSS_ENCODER])
@pytest.mark.parametrize("text", TEXTS)
def test_alone_a_text_gets_the_tokens_a_batch_gives_it(name: str, text: str) -> None:
    model = _model(name)
    for item in (text, ("Where does Ana live?", text)):
        alone = model.tokenizer.encode(*_pair(item))
        batched = model.tokenizer.encode_batch([item])[0]
        assert (alone.ids, alone.attention_mask, alone.type_ids) == (
            batched.ids,
            batched.attention_mask,
            batched.type_ids,
        )


def test_a_facts_encoding_does_not_depend_on_what_it_is_batched_with() -> None:
    short = "Ana moved to Lisbon."
    longer = [f"Ana's sister Bea moved to Porto in {year} and took the old piano with her."
              for year in range(2001, 2020)]  # fmt: skip
    alone = LateInteractionReranker(cache_size=64).encode([short])[0]
    beside = LateInteractionReranker(cache_size=64).encode([*longer, short])[-1]
    assert np.array_equal(alone, beside)


def test_a_pairs_cross_encoder_score_does_not_depend_on_the_candidates_beside_it() -> None:
    query = "Where does Ana live now?"
    short = "Ana moved to Lisbon."
    longer = [f"Ana's sister Bea moved to Porto in {year} and took the old piano with her."
              for year in range(2001, 2020)]  # fmt: skip
    reranker = CrossEncoderReranker(LateInteractionReranker(cache_size=64))
    alone = reranker.logits(query, [short])[0]
    assert reranker.logits(query, [*longer, short])[-1] == alone
    assert reranker.logits(query, [short, *longer[:3], short])[::4] == [alone, alone]
