"""Reranker encodings of facts, persisted in `fact_encodings` so no recall encodes a fact.

Writes happen after the fact's transaction has committed (`persist_pending`: the engine's write
paths and the worker call it), so a slow model never holds the user's write lock and a failure
costs only speed. Recall reads the rows of its reranked head that the process has not cached
(`load_missing`), in the recall's own scoped transaction. Organisation-shared facts are not
persisted (their rows belong to no user): they are encoded at recall, as before.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
from psycopg import AsyncConnection, Connection
from psycopg_pool import ConnectionPool

from recollect.longterm.fact_sql import NOT_ENDED
from recollect.longterm.rerankers import LateInteractionReranker, rerank_text
from recollect.store import clock
from recollect.store.scope import Scope, ScopeKind
from recollect.store.tenancy import scoped

log = logging.getLogger(__name__)

PENDING_LIMIT = 2048
"""Facts encoded per call; a larger backlog is finished by the next write or worker job."""

PENDING = f"""
SELECT f.id::text AS id, f.text, f.learned_at FROM facts AS f
WHERE f.org_id = %(org_id)s AND f.user_id = %(user_id)s AND {NOT_ENDED}
  AND NOT EXISTS (
    SELECT 1 FROM fact_encodings AS e WHERE e.fact_id = f.id AND e.model = %(model)s)
ORDER BY f.learned_at DESC
LIMIT %(limit)s
"""
INSERT = """
INSERT INTO fact_encodings (fact_id, model, org_id, user_id, dim, tokens)
VALUES (%s::uuid, %s, %s, %s, %s, %s)
ON CONFLICT (fact_id, model) DO NOTHING
"""
READ = """
SELECT fact_id::text AS id, dim, tokens FROM fact_encodings
WHERE fact_id = ANY(%(ids)s::uuid[]) AND model = %(model)s
"""
"""Read in binary: a head's encodings are most of a megabyte, and as hex text they took 5 ms to
send and decode against 2 ms as bytes."""


def persist_pending(pool: ConnectionPool[Any], scope: Scope, model: LateInteractionReranker) -> int:
    """Encode the scope owner's live facts that have no row yet and store them; how many.
    Never raises: the rows only save time, and recall encodes whatever is missing."""
    if scope.kind is ScopeKind.ORG:
        return 0
    owner = {
        "org_id": scope.org_id,
        "user_id": scope.user_id,
        "model": model.model_id,
        "now": clock.now(),
    }
    try:
        with scoped(pool, scope) as conn:
            rows = conn.execute(PENDING, {**owner, "limit": PENDING_LIMIT}).fetchall()
        if not rows:
            return 0
        encoded = model.encode([rerank_text(r["text"], r["learned_at"]) for r in rows])
        values = [
            (r["id"], model.model_id, scope.org_id, scope.user_id, t.shape[1], t.tobytes())
            for r, t in zip(rows, encoded, strict=True)
        ]
        with scoped(pool, scope) as conn, conn.cursor() as cur:
            cur.executemany(INSERT, values)
        return len(values)
    except Exception as exc:
        log.warning("reranker encodings not stored (%s); recall encodes them instead", exc)
        return 0


def load_missing(
    conn: Connection[Any], model: LateInteractionReranker, texts_by_id: dict[str, str]
) -> int:
    """Read the stored encodings of the facts (id -> text as reranked) the process lacks into
    its cache, on the caller's scoped connection; how many were found."""
    ids = _missing_ids(model, texts_by_id)
    if not ids:
        return 0
    rows = conn.execute(READ, {"ids": ids, "model": model.model_id}, binary=True).fetchall()
    return _loaded(model, texts_by_id, rows)


async def aload_missing(
    conn: AsyncConnection[Any], model: LateInteractionReranker, texts_by_id: dict[str, str]
) -> int:
    """The async twin of `load_missing`."""
    ids = _missing_ids(model, texts_by_id)
    if not ids:
        return 0
    cursor = await conn.execute(READ, {"ids": ids, "model": model.model_id}, binary=True)
    return _loaded(model, texts_by_id, await cursor.fetchall())


def _missing_ids(model: LateInteractionReranker, texts_by_id: dict[str, str]) -> list[str]:
    wanted = set(model.missing(list(texts_by_id.values())))
    return [i for i, text in texts_by_id.items() if text in wanted]


def _loaded(
    model: LateInteractionReranker, texts_by_id: dict[str, str], rows: list[dict[str, Any]]
) -> int:
    model.load([(texts_by_id[r["id"]], _matrix(r["tokens"], r["dim"])) for r in rows])
    return len(rows)


def _matrix(raw: bytes, dim: int) -> np.ndarray[Any, np.dtype[np.float16]]:
    return np.frombuffer(raw, dtype=np.float16).reshape(-1, dim)


def stored_ids(conn: Connection[Any], ids: Sequence[str], model_id: str) -> set[str]:
    """Which of `ids` have a stored encoding for `model_id` (for tests and `recollect` checks)."""
    rows = conn.execute(READ, {"ids": list(ids), "model": model_id}).fetchall()
    return {r["id"] for r in rows}
