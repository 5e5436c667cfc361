"""The review queue: candidate facts that passed validation but not the confidence bar.

A reviewer accepts one (it goes through the same `FactWriter` the worker uses) or rejects it
(kept as `dismissed`, so the same fact is not queued again); every read and write is scoped
to the reviewer's tenant.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg_pool import ConnectionPool

from recollect.extraction.fact_writer import FactWriter
from recollect.gate.secrets import mask_secrets
from recollect.longterm.records import FactCategory, NewFact
from recollect.store.errors import RecollectError
from recollect.store.scope import Scope
from recollect.store.tenancy import scoped

LIST_CANDIDATES = """
SELECT id, text, category, subject, confidence, source_message_ids, status, reasons, created_at
FROM fact_candidates
WHERE org_id = %(org_id)s AND user_id = %(user_id)s AND status = ANY(%(statuses)s)
ORDER BY created_at, id
LIMIT %(limit)s
"""

LOCK_REVIEW_ITEM = """
SELECT id, text, category, subject, confidence, source_message_ids, status
FROM fact_candidates
WHERE id = %(id)s AND org_id = %(org_id)s AND user_id = %(user_id)s
FOR UPDATE
"""

DECIDE = """
UPDATE fact_candidates
SET status = %(status)s, fact_id = %(fact_id)s, decided_at = now(),
    reasons = reasons || %(note)s::text
WHERE id = %(id)s
"""


class ReviewItemNotFoundError(RecollectError):
    """The id is not in this user's review queue."""


@dataclass(frozen=True)
class Candidate:
    """A candidate fact as the review queue shows it."""

    id: int
    text: str
    category: str
    subject: str | None
    confidence: float
    source_message_ids: tuple[str, ...]
    status: str
    reasons: tuple[str, ...]
    created_at: datetime

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Candidate:
        """A row as shown, secrets masked (rows are stored masked; older ones may not be)."""
        return cls(
            id=row["id"],
            text=mask_secrets(row["text"]),
            category=row["category"],
            subject=row["subject"] and mask_secrets(row["subject"]),
            confidence=float(row["confidence"]),
            source_message_ids=tuple(row["source_message_ids"]),
            status=row["status"],
            reasons=tuple(mask_secrets(reason) for reason in row.get("reasons") or ()),
            created_at=row["created_at"],
        )


def list_candidates(
    pool: ConnectionPool[Any],
    scope: Scope,
    statuses: tuple[str, ...] = ("review",),
    limit: int = 100,
) -> list[Candidate]:
    """This user's candidates with the given statuses, oldest first."""
    params = {**_params(scope), "statuses": list(statuses), "limit": limit}
    with scoped(pool, scope) as conn:
        return [Candidate.from_row(row) for row in conn.execute(LIST_CANDIDATES, params)]


def accept(pool: ConnectionPool[Any], scope: Scope, item_id: int, writer: FactWriter) -> str | None:
    """Store a reviewed fact through the writer; returns the stored fact's id, if any."""
    with scoped(pool, scope) as conn:
        row = _pending(
            conn.execute(LOCK_REVIEW_ITEM, {**_params(scope), "id": item_id}).fetchone(), item_id
        )
        fact = NewFact(
            text=row["text"],
            category=FactCategory(row["category"]),
            subject=row["subject"],
            confidence=float(row["confidence"]),
            source_ids=tuple(row["source_message_ids"]),
        )
        fact_id = writer.remember(conn, scope, fact)
        conn.execute(
            DECIDE,
            {"id": item_id, "status": "stored", "fact_id": fact_id, "note": "accepted in review"},
        )
        return fact_id


def reject(pool: ConnectionPool[Any], scope: Scope, item_id: int) -> None:
    """Dismiss a candidate; it stays on record so it is not proposed again."""
    with scoped(pool, scope) as conn:
        _pending(
            conn.execute(LOCK_REVIEW_ITEM, {**_params(scope), "id": item_id}).fetchone(), item_id
        )
        conn.execute(
            DECIDE,
            {"id": item_id, "status": "dismissed", "fact_id": None, "note": "rejected in review"},
        )


def _pending(row: dict[str, Any] | None, item_id: int) -> dict[str, Any]:
    if row is None or row["status"] != "review":
        state = "is not awaiting review" if row else "does not exist for this user"
        raise ReviewItemNotFoundError(
            f"review item {item_id} {state}; see `recollect memory review list`"
        )
    return row


def _params(scope: Scope) -> dict[str, Any]:
    return {"org_id": scope.org_id, "user_id": scope.user_id}
