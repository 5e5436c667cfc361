"""How long facts live: per-category retention, soft delete with a recovery window, merging of
near-duplicates, and the end of incognito sessions.

A near-duplicate is merged only under the write path's own rule (`recollect.longterm.duplicates`):
a cosine within the embedder's threshold, and every content word, name, number and negation of
the merged fact present in the one that keeps it.

Maintenance spans every tenant, so it runs on the admin connection (the one migrations use:
a superuser or a role with BYPASSRLS), never on the app's pool. Every step takes `now` as a
parameter (default: `recollect.store.clock.now()`), so a moved clock rehearses next year's run.
One run is one transaction under an advisory lock: two schedulers cannot interleave, and
`dry_run` performs the whole run and rolls it back, so its counts are exactly what a real run
would do.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from psycopg import Connection, Rollback
from psycopg_pool import ConnectionPool

from recollect.longterm.duplicates import configured_near_duplicate_similarity, says_nothing_new
from recollect.longterm.records import FactCategory
from recollect.store import clock
from recollect.store.errors import RecollectError
from recollect.store.scope import Scope, ScopeKind
from recollect.store.tenancy import scoped

MAINTENANCE_LOCK_KEY = 0x5245_4D54  # "REMT"
DEFAULT_TTL_DAYS: Mapping[str, float | None] = {
    FactCategory.PREFERENCE: None,
    FactCategory.BIOGRAPHICAL: 365,
    FactCategory.CONSTRAINT: None,  # an allergy is not less true for being unrepeated
    FactCategory.GOAL: 30,
    FactCategory.TECHNICAL_STACK: None,
    FactCategory.EVENT: None,
}
"""Days without reinforcement before a fact expires; None keeps it for ever."""
RETENTION_ENV = "RECOLLECT_RETENTION"

EXPIRE_STALE = """
UPDATE facts
SET deleted_at = %(now)s, metadata = metadata || jsonb_build_object('expired', %(reason)s::text)
WHERE superseded_by IS NULL AND deleted_at IS NULL AND session_id IS NULL
  AND category = %(category)s
  AND last_reinforced_at < %(now)s - make_interval(secs => %(seconds)s)
RETURNING category
"""
EXPIRE_UNREINFORCED = """
UPDATE facts
SET deleted_at = %(now)s, metadata = metadata || jsonb_build_object('expired', %(reason)s::text)
WHERE superseded_by IS NULL AND deleted_at IS NULL AND session_id IS NULL
  AND confidence < %(min_confidence)s AND reinforcement_count = 0
  AND learned_at < %(now)s - make_interval(secs => %(seconds)s)
RETURNING category
"""
PURGE_EXPIRED = """
DELETE FROM facts WHERE deleted_at < %(now)s - make_interval(secs => %(seconds)s)
RETURNING category
"""
"""Only the deleted fact goes: the versions it superseded keep their `valid_to`, so they stay
history (never live again) until their own retention ends them."""
PURGE_OLD_SESSION_FACTS = """
DELETE FROM facts
WHERE session_id IS NOT NULL AND learned_at < %(now)s - make_interval(secs => %(seconds)s)
RETURNING category
"""
PURGE_OLD_SESSION_EPISODES = """
DELETE FROM episodes
WHERE session_id IS NOT NULL AND occurred_at < %(now)s - make_interval(secs => %(seconds)s)
"""
PURGE_OLD_TRACES = """
DELETE FROM memory_traces WHERE created_at < %(now)s - make_interval(secs => %(seconds)s)
"""
DUPLICATE_PAIRS = """
SELECT a.id::text AS a, b.id::text AS b
FROM facts a
JOIN facts b
  ON a.org_id = b.org_id AND a.user_id = b.user_id
 AND a.session_id IS NOT DISTINCT FROM b.session_id
 AND a.category = b.category AND a.id < b.id
WHERE a.superseded_by IS NULL AND a.deleted_at IS NULL
  AND b.superseded_by IS NULL AND b.deleted_at IS NULL
  AND (a.valid_to IS NULL OR a.valid_to > %(now)s)
  AND a.valid_to IS NOT DISTINCT FROM b.valid_to
  AND a.embedding IS NOT NULL AND b.embedding IS NOT NULL
  AND vector_dims(a.embedding) = vector_dims(b.embedding)
  AND (a.subject IS NULL OR b.subject IS NULL OR a.subject = b.subject)
  AND 1 - (a.embedding <=> b.embedding) >= %(threshold)s
"""
"""Candidates only: the word test decides (two different subjects never merge, as on write).
Both still hold at `now` and end together: a fact a plan ends on a day still to come is live,
and merging it with one that does not end would move or lose the plan's day."""
FACTS_BY_ID = """
SELECT id::text AS id, category, text, confidence, reinforcement_count, learned_at,
       last_reinforced_at
FROM facts WHERE id = ANY(%(ids)s::uuid[])
"""
MERGE_INTO = """
UPDATE facts
SET superseded_by = %(keeper)s::uuid, superseded_at = %(now)s,
    metadata = metadata || jsonb_build_object('merged_into', %(keeper)s::text)
WHERE id = ANY(%(ids)s::uuid[]) AND superseded_by IS NULL
"""
STRENGTHEN_KEEPER = """
UPDATE facts
SET reinforcement_count = reinforcement_count + %(merged)s,
    last_reinforced_at = greatest(last_reinforced_at, %(latest)s)
WHERE id = %(keeper)s::uuid
"""
FACT_STATE = "SELECT deleted_at FROM facts WHERE id = %(id)s::uuid"
RESTORE_FACT = """
UPDATE facts SET deleted_at = NULL, metadata = metadata - 'expired'
WHERE id = %(id)s::uuid AND deleted_at IS NOT NULL
  AND deleted_at >= %(now)s - make_interval(secs => %(seconds)s)
"""
END_SESSION_FACTS = """
DELETE FROM facts
WHERE org_id = %(org_id)s AND user_id = %(user_id)s AND session_id = %(session_id)s
"""
END_SESSION_EPISODES = """
DELETE FROM episodes
WHERE org_id = %(org_id)s AND user_id = %(user_id)s AND session_id = %(session_id)s
"""


class MaintenanceBusyError(RecollectError):
    """Another maintenance run holds the lock."""


class FactNotRestorableError(RecollectError):
    """The fact is unknown, not deleted, or past its recovery window."""


@dataclass(frozen=True)
class RetentionPolicy:
    """What maintenance keeps; every figure is configurable (`RECOLLECT_RETENTION`)."""

    ttl_days: Mapping[str, float | None] = field(default_factory=lambda: dict(DEFAULT_TTL_DAYS))
    low_confidence: float = 0.6
    """Facts below this confidence that were never reinforced expire after `unreinforced_days`."""
    unreinforced_days: float = 14
    recovery_days: float = 30
    """Soft-deleted facts can be restored this long; then they are deleted for good."""
    session_days: float = 1
    """Incognito facts outlive a session that was never ended by at most this long."""
    trace_days: float = 30
    """Memory traces (what each turn's prompt held) are kept this long for debugging."""
    duplicate_similarity: float | None = None
    """Cosine from which two facts may be duplicates; None: the configured embedder's own
    measured value (`RECOLLECT_EMBEDDINGS`, see `recollect.longterm.duplicates`)."""

    @classmethod
    def from_env(cls) -> RetentionPolicy:
        """`RECOLLECT_RETENTION="goal=60,biographical=forever,recovery=7,low_confidence=0.5"`."""
        raw = os.environ.get(RETENTION_ENV, "").strip()
        return cls.parse(raw) if raw else cls()

    @classmethod
    def parse(cls, text: str) -> RetentionPolicy:
        """Comma-separated `name=value`: categories take days or `forever`."""
        ttl: dict[str, float | None] = dict(DEFAULT_TTL_DAYS)
        knobs: dict[str, float] = {}
        settings = {"low_confidence", "unreinforced", "recovery", "session", "traces", "duplicate"}
        for item in filter(None, (part.strip() for part in text.split(","))):
            name, sep, value = (s.strip() for s in item.partition("="))
            if not sep or not value:
                raise ValueError(f"{RETENTION_ENV}: expected name=value, got {item!r}")
            if name in ttl:
                ttl[name] = None if value == "forever" else _number(name, value)
            elif name in settings:
                knobs[name] = _number(name, value)
            else:
                known = ", ".join([*ttl, *sorted(settings)])
                raise ValueError(f"{RETENTION_ENV}: unknown setting {name!r} (known: {known})")
        defaults = cls()
        return cls(
            ttl_days=ttl,
            low_confidence=knobs.get("low_confidence", defaults.low_confidence),
            unreinforced_days=knobs.get("unreinforced", defaults.unreinforced_days),
            recovery_days=knobs.get("recovery", defaults.recovery_days),
            session_days=knobs.get("session", defaults.session_days),
            trace_days=knobs.get("traces", defaults.trace_days),
            duplicate_similarity=knobs.get("duplicate", defaults.duplicate_similarity),
        )


def _number(name: str, value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"{RETENTION_ENV}: {name} must be a number, got {value!r}") from None
    if number < 0:
        raise ValueError(f"{RETENTION_ENV}: {name} must be 0 or more, got {value!r}")
    return number


@dataclass
class CategoryReport:
    """What one run did to one category."""

    expired: int = 0
    """Soft-deleted: no reinforcement within the category's retention."""
    expired_unreinforced: int = 0
    """Soft-deleted: low confidence and never reinforced."""
    merged: int = 0
    """Superseded by a near-duplicate with higher confidence."""
    purged: int = 0
    """Hard-deleted: past the recovery window, or an incognito session's leftovers."""


@dataclass
class MaintenanceReport:
    """Per-category counts of one run (a dry run's are what a real run would have done)."""

    now: datetime
    dry_run: bool
    categories: dict[str, CategoryReport] = field(default_factory=dict)
    session_episodes_purged: int = 0
    traces_purged: int = 0

    def category(self, name: str) -> CategoryReport:
        return self.categories.setdefault(str(name), CategoryReport())

    def total(self) -> int:
        """Facts changed in any way."""
        return sum(sum(vars(c).values()) for c in self.categories.values())

    def as_json(self) -> dict[str, Any]:
        return {
            "now": self.now.isoformat(),
            "dry_run": self.dry_run,
            "categories": {k: vars(v) for k, v in sorted(self.categories.items())},
            "session_episodes_purged": self.session_episodes_purged,
            "traces_purged": self.traces_purged,
        }


def run_maintenance(
    conn: Connection[Any],
    policy: RetentionPolicy | None = None,
    *,
    now: datetime | None = None,
    dry_run: bool = False,
) -> MaintenanceReport:
    """Expire, purge and merge across all tenants on an admin connection, in one transaction."""
    policy = policy or RetentionPolicy.from_env()
    moment = now or clock.now()
    report = MaintenanceReport(moment, dry_run)
    with conn.transaction() as tx:
        locked = conn.execute(
            "SELECT pg_try_advisory_xact_lock(%s) AS ok", (MAINTENANCE_LOCK_KEY,)
        ).fetchone()
        if not locked or not locked["ok"]:
            raise MaintenanceBusyError("another maintenance run is in progress; try later")
        _expire(conn, policy, moment, report)
        _purge(conn, policy, moment, report)
        _merge_duplicates(conn, policy, moment, report)
        if dry_run:
            raise Rollback(tx)
    return report


def _expire(
    conn: Connection[Any], policy: RetentionPolicy, now: datetime, report: MaintenanceReport
) -> None:
    for category, days in sorted(policy.ttl_days.items()):
        report.category(category)
        if days is None:
            continue
        rows = conn.execute(
            EXPIRE_STALE,
            {"now": now, "category": category, "seconds": _seconds(days),
             "reason": f"not reinforced for {days:g} days"},
        ).fetchall()  # fmt: skip
        report.category(category).expired += len(rows)
    rows = conn.execute(
        EXPIRE_UNREINFORCED,
        {"now": now, "min_confidence": policy.low_confidence,
         "seconds": _seconds(policy.unreinforced_days),
         "reason": f"confidence below {policy.low_confidence:g}, never reinforced"},
    ).fetchall()  # fmt: skip
    for row in rows:
        report.category(row["category"]).expired_unreinforced += 1


def _purge(
    conn: Connection[Any], policy: RetentionPolicy, now: datetime, report: MaintenanceReport
) -> None:
    for statement, days in (
        (PURGE_EXPIRED, policy.recovery_days),
        (PURGE_OLD_SESSION_FACTS, policy.session_days),
    ):
        for row in conn.execute(statement, {"now": now, "seconds": _seconds(days)}).fetchall():
            report.category(row["category"]).purged += 1
    episodes = conn.execute(
        PURGE_OLD_SESSION_EPISODES, {"now": now, "seconds": _seconds(policy.session_days)}
    )
    report.session_episodes_purged = max(episodes.rowcount, 0)
    traces = conn.execute(PURGE_OLD_TRACES, {"now": now, "seconds": _seconds(policy.trace_days)})
    report.traces_purged = max(traces.rowcount, 0)


def _merge_duplicates(
    conn: Connection[Any], policy: RetentionPolicy, now: datetime, report: MaintenanceReport
) -> None:
    threshold = policy.duplicate_similarity
    if threshold is None:
        threshold = configured_near_duplicate_similarity()
    pairs = conn.execute(DUPLICATE_PAIRS, {"threshold": threshold, "now": now}).fetchall()
    if not pairs:
        return
    close: dict[str, set[str]] = {}
    for pair in pairs:
        close.setdefault(pair["a"], set()).add(pair["b"])
        close.setdefault(pair["b"], set()).add(pair["a"])
    facts = {r["id"]: r for r in conn.execute(FACTS_BY_ID, {"ids": list(close)}).fetchall()}
    ranked = sorted(
        facts.values(),
        key=lambda r: (r["confidence"], r["reinforcement_count"], r["learned_at"], r["id"]),
        reverse=True,
    )
    rank = {r["id"]: i for i, r in enumerate(ranked)}
    merged_into: dict[str, list[dict[str, Any]]] = {}
    for fact in ranked:  # most confident first: a keeper is decided before what it absorbs
        keeper = next(
            (
                facts[k]
                for k in sorted(close[fact["id"]], key=rank.__getitem__)
                if rank[k] < rank[fact["id"]]
                and k in merged_into  # still live: a keeper, not itself merged away
                and says_nothing_new(fact["text"], facts[k]["text"])
            ),
            None,
        )
        if keeper is None:
            merged_into[fact["id"]] = []
        else:
            merged_into[keeper["id"]].append(fact)
    for keeper_id, others in merged_into.items():
        if not others:
            continue
        keeper = facts[keeper_id]
        conn.execute(
            MERGE_INTO, {"keeper": keeper_id, "ids": [o["id"] for o in others], "now": now}
        )
        conn.execute(
            STRENGTHEN_KEEPER,
            {"keeper": keeper_id, "merged": len(others),
             "latest": max(o["last_reinforced_at"] for o in [keeper, *others])},
        )  # fmt: skip
        report.category(keeper["category"]).merged += len(others)


def restore_fact(
    conn: Connection[Any],
    fact_id: str,
    policy: RetentionPolicy | None = None,
    *,
    now: datetime | None = None,
) -> None:
    """Bring a soft-deleted fact back within its recovery window.

    On the admin connection it reaches any tenant's fact; inside `scoped` only the scope's own.
    """
    policy = policy or RetentionPolicy.from_env()
    moment = now or clock.now()
    if not _is_uuid(fact_id):
        raise FactNotRestorableError(f"{fact_id!r} is not a fact id (a UUID)")
    with conn.transaction():
        row = conn.execute(FACT_STATE, {"id": fact_id}).fetchone()
        if row is None:
            raise FactNotRestorableError(f"no fact {fact_id} (or it was already purged)")
        if row["deleted_at"] is None:
            raise FactNotRestorableError(f"fact {fact_id} is not deleted")
        cursor = conn.execute(
            RESTORE_FACT,
            {"id": fact_id, "now": moment, "seconds": _seconds(policy.recovery_days)},
        )
        if cursor.rowcount != 1:
            raise FactNotRestorableError(
                f"fact {fact_id} was deleted at {row['deleted_at'].isoformat()}, past the "
                f"{policy.recovery_days:g}-day recovery window"
            )


def end_session(pool: ConnectionPool[Any], scope: Scope) -> dict[str, int]:
    """Delete everything an incognito session wrote (facts and episodes); nothing outlives it."""
    if scope.kind is not ScopeKind.SESSION:
        raise ValueError("end_session needs a session scope (Scope.for_session)")
    params = {"org_id": scope.org_id, "user_id": scope.user_id, "session_id": scope.session_id}
    with scoped(pool, scope) as conn:
        facts = conn.execute(END_SESSION_FACTS, params).rowcount
        episodes = conn.execute(END_SESSION_EPISODES, params).rowcount
    return {"facts": max(facts, 0), "episodes": max(episodes, 0)}


def _seconds(days: float) -> float:
    return float(timedelta(days=days).total_seconds())


def _is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True
