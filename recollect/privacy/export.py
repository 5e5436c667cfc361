""" "What do you hold about me?": one JSON document with everything a user has, and a readable
summary of what the agent remembers.

Everything is read in one `scoped` transaction (one snapshot), so row-level security decides
what is reachable: the export cannot contain another user's rows. It includes what she wrote
into her organisation's shared memory and what she did in other people's workflows (the rows
`forget` deletes or pseudonymises), the latter through `recollect_acted_rows()`. Embeddings
are left out: they are derived from the texts, which are exported.

The thread transcripts are the user's own words, exported as said. Every record derived from
them (traces, fact candidates, job errors) has its secrets masked: they are written masked,
and read through `mask_secrets_in` here too, so a row older than that rule leaks nothing.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Any

from langchain_core.messages import BaseMessage, messages_to_dict
from langgraph.checkpoint.base import BaseCheckpointSaver
from psycopg_pool import ConnectionPool

from recollect.gate import mask_secrets_in
from recollect.longterm.profile import from_row
from recollect.store import clock
from recollect.store.acting import acting_as
from recollect.store.scope import ORG_OWNER, Scope
from recollect.store.tenancy import scoped

EXPORT_FORMAT = "recollect.export/1"
DERIVED = ("memory_traces", "review_queue", "jobs")
"""Rows made from what was said, read with their secrets masked."""
OWNER = "org_id = %(org_id)s AND user_id = %(user_id)s"

EXPORT_FACTS = f"""
SELECT id::text AS id, session_id, category, subject, text, confidence, source_ids,
       learned_at, last_reinforced_at, reinforcement_count, superseded_by::text AS superseded_by,
       superseded_at, valid_from, valid_to, deleted_at, metadata
FROM facts WHERE {OWNER} ORDER BY learned_at, id
"""
EXPORT_PROFILE = (
    f"SELECT schema_version, revision, document, updated_at FROM profiles WHERE {OWNER}"
)
EXPORT_EPISODES = f"""
SELECT id::text AS id, session_id, summary, occurred_at, source_ids, deleted_at, metadata
FROM episodes WHERE {OWNER} ORDER BY occurred_at, id
"""
EXPORT_THREADS = f"""
SELECT thread_id, kind, created_at, last_active_at FROM threads WHERE {OWNER}
ORDER BY created_at, thread_id
"""
EXPORT_AUTHORED_SHARED = f"""
SELECT id::text AS id, category, subject, text, confidence, learned_at, deleted_at, metadata
FROM facts WHERE org_id = %(org_id)s AND user_id = '{ORG_OWNER}' AND author_id = %(user_id)s
ORDER BY learned_at, id
"""
EXPORT_STORE_ITEMS = f"""
SELECT labels, key, fact_id::text AS fact_id, value, created_at, updated_at, expires_at
FROM store_items WHERE {OWNER} ORDER BY created_at, labels, key
"""
EXPORT_ACTED = "SELECT * FROM recollect_acted_rows()"
EXPORT_WORKFLOWS = f"SELECT * FROM approval_workflows WHERE {OWNER} ORDER BY created_at, id"
EXPORT_AUDIT = f"SELECT * FROM approval_audit WHERE {OWNER} ORDER BY at, workflow_id"
EXPORT_REFUNDS = f"SELECT * FROM refunds WHERE {OWNER} ORDER BY id"
EXPORT_REVIEW = f"""
SELECT id, session_id, thread_id, text, category, subject, confidence, status, reasons,
       fact_id, created_at, decided_at
FROM fact_candidates WHERE {OWNER} ORDER BY created_at, id
"""
EXPORT_JOBS = f"""
SELECT id, thread_id, status, attempts, facts_found, last_error, created_at, finished_at
FROM memory_jobs WHERE {OWNER} ORDER BY id
"""
EXPORT_TRACES = f"""
SELECT thread_id, turn, kind, checkpoint_bytes, created_at, trace FROM memory_traces
WHERE {OWNER} ORDER BY thread_id, turn, id
"""
LIVE_FACTS = f"""
SELECT category, text, confidence, learned_at FROM facts
WHERE {OWNER} AND session_id IS NULL AND superseded_by IS NULL AND deleted_at IS NULL
ORDER BY category, confidence DESC, learned_at
"""
SUMMARY_COUNTS = f"""
SELECT (SELECT count(*) FROM episodes WHERE {OWNER} AND deleted_at IS NULL) AS episodes,
       (SELECT count(*) FROM threads WHERE {OWNER}) AS threads,
       (SELECT count(*) FROM fact_candidates WHERE {OWNER} AND status = 'review') AS review,
       (SELECT count(*) FROM facts WHERE {OWNER} AND deleted_at IS NOT NULL) AS deleted
"""


def export_user(
    pool: ConnectionPool[Any],
    scope: Scope,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
) -> dict[str, Any]:
    """Every row the user owns, with fact history and thread transcripts, JSON-ready."""
    owner = {"org_id": scope.org_id, "user_id": scope.user_id}
    with scoped(pool, Scope.for_user(scope.org_id, scope.user_id)) as conn:
        rows = {
            name: [dict(r) for r in conn.execute(statement, owner).fetchall()]
            for name, statement in (
                ("facts", EXPORT_FACTS),
                ("store_items", EXPORT_STORE_ITEMS),
                ("profile", EXPORT_PROFILE),
                ("episodes", EXPORT_EPISODES),
                ("threads", EXPORT_THREADS),
                ("workflows", EXPORT_WORKFLOWS),
                ("audit", EXPORT_AUDIT),
                ("refunds", EXPORT_REFUNDS),
                ("review_queue", EXPORT_REVIEW),
                ("jobs", EXPORT_JOBS),
                ("memory_traces", EXPORT_TRACES),
                ("authored_shared_facts", EXPORT_AUTHORED_SHARED),
                ("acted_in_others_workflows", EXPORT_ACTED),
            )
        }
    for name in DERIVED:
        rows[name] = [mask_secrets_in(row) for row in rows[name]]
    rows["profile"] = [_profile_document(row) for row in rows["profile"]]
    _attach_history(rows["facts"])
    for thread in rows["threads"]:
        with acting_as(scope):  # checkpoints are read under row-level security, as the user
            thread["transcript"] = _transcript(checkpointer, thread["thread_id"])
    document = {
        "format": EXPORT_FORMAT,
        "exported_at": clock.now(),
        "org_id": scope.org_id,
        "user_id": scope.user_id,
        **rows,
    }
    exported: dict[str, Any] = _jsonable(document)
    return exported


def _attach_history(facts: list[dict[str, Any]]) -> None:
    """Each fact lists the ids it replaced, oldest first; superseded facts stay in the list."""
    replaced: dict[str, list[str]] = defaultdict(list)
    for fact in facts:
        if fact["superseded_by"]:
            replaced[fact["superseded_by"]].append(fact["id"])
    now = clock.now()
    for fact in facts:
        fact["replaces"] = replaced.get(fact["id"], [])
        ended = fact["valid_to"] is not None and fact["valid_to"] <= now  # a purged successor
        # leaves valid_to; a plan's day still to come does not end the fact yet
        fact["status"] = (
            "deleted"
            if fact["deleted_at"]
            else "superseded"
            if fact["superseded_by"] or ended
            else "live"
        )


def _transcript(
    checkpointer: BaseCheckpointSaver[Any] | None, thread_id: str
) -> list[dict[str, Any]] | None:
    """The thread's messages at its latest checkpoint (None without a checkpointer)."""
    if checkpointer is None:
        return None
    saved = checkpointer.get_tuple({"configurable": {"thread_id": thread_id}})
    if saved is None:
        return []
    values = saved.checkpoint.get("channel_values", {})
    messages = values.get("messages") or []
    return messages_to_dict([m for m in messages if isinstance(m, BaseMessage)])


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def _profile_document(row: dict[str, Any]) -> dict[str, Any]:
    """The stored profile in the current version's shape (older versions are migrated)."""
    profile = from_row(row)
    return {
        "revision": profile.revision,
        "updated_at": profile.updated_at,
        "fields": profile.fields,
    }


def describe_user(pool: ConnectionPool[Any], scope: Scope) -> str:
    """What the agent remembers about the user, as a person would read it."""
    owner = {"org_id": scope.org_id, "user_id": scope.user_id}
    with scoped(pool, Scope.for_user(scope.org_id, scope.user_id)) as conn:
        profile = from_row(conn.execute(EXPORT_PROFILE, owner).fetchone()).entries()
        facts = conn.execute(LIVE_FACTS, owner).fetchall()
        counts = conn.execute(SUMMARY_COUNTS, owner).fetchone()
    lines = [f"What I remember about {scope.user_id} ({scope.org_id}):"]
    if not profile and not facts:
        lines.append("  nothing yet.")
    if profile:
        lines.append("Profile:")
        lines += [f"  {entry.key}: {entry.value}" for entry in profile]
    by_category: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for fact in facts:
        by_category[fact["category"]].append(fact)
    for category, items in by_category.items():
        lines.append(f"{category.replace('_', ' ').capitalize()}:")
        lines += [
            f"  - {f['text']}  (confidence {f['confidence']:.2f}, since {f['learned_at']:%Y-%m-%d})"
            for f in items
        ]
    if counts:
        lines.append(
            f"Also: {counts['episodes']} episode(s), {counts['threads']} conversation(s), "
            f"{counts['review']} fact(s) awaiting review, {counts['deleted']} deleted fact(s) "
            "not yet purged."
        )
    return "\n".join(lines)
