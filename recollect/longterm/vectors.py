"""Embeddings as pgvector values, without registering adapters on every pooled connection."""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Any

from langchain_core.embeddings import Embeddings
from pgvector import Vector
from pgvector.psycopg.vector import register_vector_info
from psycopg import AsyncConnection, Connection
from psycopg.types import TypeInfo

log = logging.getLogger(__name__)


class EmbeddingError(ValueError):
    """An embedding that cannot be stored or compared (wrong shape, not finite)."""


def literal(vector: Sequence[float]) -> str:
    """pgvector's text form; cast with `::vector` in SQL."""
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"


def checked(vector: Sequence[float], *, expected_dim: int | None = None) -> list[float]:
    """A finite, non-empty vector of the expected size, or a clear error."""
    values = [float(x) for x in vector]
    if not values:
        raise EmbeddingError("an embedding must have at least one dimension")
    if expected_dim is not None and len(values) != expected_dim:
        raise EmbeddingError(f"expected a {expected_dim}-dimensional embedding, got {len(values)}")
    if not all(math.isfinite(x) for x in values):
        raise EmbeddingError("an embedding must contain only finite numbers")
    return values


def embed_texts(embedder: Embeddings | None, texts: Sequence[str]) -> list[list[float] | None]:
    """Document embeddings, or None per text when there is no embedder or it fails.

    A fact without an embedding is still stored and found by full-text search, so an embedder
    outage degrades recall instead of losing writes.
    """
    if embedder is None or not texts:
        return [None] * len(texts)
    try:
        vectors = embedder.embed_documents(list(texts))
    except Exception as exc:
        log.warning("embedding failed (%s); storing without embeddings", exc)
        return [None] * len(texts)
    if len(vectors) != len(texts):
        log.warning("embedder returned %d vectors for %d texts", len(vectors), len(texts))
        return [None] * len(texts)
    return [checked(v) for v in vectors]


class VectorTypes:
    """The database's `vector` type, looked up once, registered on a connection on demand."""

    def __init__(self) -> None:
        self._info: TypeInfo | None = None

    def register(self, conn: Connection[Any]) -> None:
        """Make `Vector` values and the `vector` type name usable on this connection (COPY)."""
        info = self._info
        if info is None:
            info = self._info = TypeInfo.fetch(conn, "vector")
            if info is None:
                raise EmbeddingError("the database has no `vector` type: is pgvector installed?")
        if conn.adapters.types.get(info.oid) is None:  # once per pooled connection
            register_vector_info(conn, info)

    async def aregister(self, conn: AsyncConnection[Any]) -> None:
        """The async twin of `register`."""
        info = self._info
        if info is None:
            info = self._info = await TypeInfo.fetch(conn, "vector")
            if info is None:
                raise EmbeddingError("the database has no `vector` type: is pgvector installed?")
        if conn.adapters.types.get(info.oid) is None:
            register_vector_info(conn, info)


__all__ = ["EmbeddingError", "Vector", "VectorTypes", "checked", "embed_texts", "literal"]
