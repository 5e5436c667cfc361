"""The statements behind `RecollectStore`; each runs inside `scoped`, so row-level security
decides what a statement may see. `%(org_id)s`/`%(user_id)s` name the namespace's owner
(a user, or `@org` for the organisation's shared facts)."""

from __future__ import annotations

from recollect.longterm.fact_sql import FACT_COLUMNS, LIVE

_OWNER = "s.org_id = %(org_id)s AND s.user_id = %(user_id)s"
_VISIBLE = "f.deleted_at IS NULL AND (s.expires_at IS NULL OR s.expires_at > now())"
_ITEM_COLUMNS = (
    "s.labels, s.key, s.value, s.created_at, s.updated_at, s.fact_id::text AS fact_id, "
    "f.text AS fact_text, s.expires_at, s.written_by"
)

SWEEP_EXPIRED = """
WITH gone AS (
    DELETE FROM store_items
    WHERE org_id = %(org_id)s AND user_id = %(user_id)s AND expires_at <= now()
    RETURNING fact_id
)
UPDATE facts f SET deleted_at = now()
FROM (SELECT DISTINCT fact_id FROM gone) g
WHERE f.id = g.fact_id AND f.deleted_at IS NULL
  AND NOT EXISTS (
    SELECT 1 FROM store_items s
    WHERE s.fact_id = f.id AND (s.expires_at IS NULL OR s.expires_at > now())
  )
"""
"""Expired items go, and so does a fact no live item names any more (soft delete)."""

ITEMS = f"""
SELECT {_ITEM_COLUMNS} FROM store_items s JOIN facts f ON f.id = s.fact_id
WHERE {_OWNER} AND {_VISIBLE}
ORDER BY s.updated_at DESC, s.labels, s.key
"""

ITEM = f"""
SELECT {_ITEM_COLUMNS} FROM store_items s JOIN facts f ON f.id = s.fact_id
WHERE {_OWNER} AND s.labels = %(labels)s AND s.key = %(key)s AND {_VISIBLE}
"""

ITEM_FOR_UPDATE = f"""
SELECT s.fact_id::text AS fact_id, f.text AS fact_text, f.deleted_at IS NULL AS alive,
       (SELECT count(*) FROM store_items o
        WHERE o.fact_id = s.fact_id AND NOT (o.labels = s.labels AND o.key = s.key)) AS others
FROM store_items s JOIN facts f ON f.id = s.fact_id
WHERE {_OWNER} AND s.labels = %(labels)s AND s.key = %(key)s
FOR UPDATE OF s
"""

SIMILARITIES = """
SELECT id::text AS id,
       CASE WHEN vector_dims(embedding) = %(dim)s
            THEN 1 - (embedding <=> %(vector)s::vector) END AS similarity
FROM facts WHERE id = ANY(%(ids)s::uuid[]) AND embedding IS NOT NULL
"""
"""The cosine of each listed fact to a query (a fact embedded by another model is left out)."""

BARE_FACTS = f"""
SELECT {FACT_COLUMNS} FROM facts f
WHERE org_id = %(org_id)s AND user_id = %(user_id)s AND session_id IS NULL AND {LIVE}
  AND NOT EXISTS (SELECT 1 FROM store_items s WHERE s.fact_id = f.id)
ORDER BY last_reinforced_at DESC, id
"""
"""Facts no item names (extracted, or kept by the agent's tools): items keyed by their id."""

BARE_FACT = f"""
SELECT {FACT_COLUMNS} FROM facts f
WHERE org_id = %(org_id)s AND user_id = %(user_id)s AND session_id IS NULL AND {LIVE}
  AND id = %(id)s::uuid AND NOT EXISTS (SELECT 1 FROM store_items s WHERE s.fact_id = f.id)
"""

UPSERT_ITEM = """
INSERT INTO store_items (org_id, user_id, labels, key, fact_id, value, ttl_minutes, expires_at)
VALUES (%(org_id)s, %(user_id)s, %(labels)s, %(key)s, %(fact_id)s::uuid, %(value)s,
        %(ttl)s, now() + %(ttl)s * interval '1 minute')
ON CONFLICT (org_id, user_id, labels, key) DO UPDATE
SET fact_id = EXCLUDED.fact_id, value = EXCLUDED.value, updated_at = now(),
    ttl_minutes = EXCLUDED.ttl_minutes, expires_at = EXCLUDED.expires_at,
    written_by = EXCLUDED.written_by
"""
"""`written_by` takes its default, the writing scope's user, on insert and on every update."""

DELETE_ITEM = f"""
DELETE FROM store_items s WHERE {_OWNER} AND s.labels = %(labels)s AND s.key = %(key)s
RETURNING s.fact_id::text AS fact_id
"""

FORGET_UNNAMED = """
UPDATE facts f SET deleted_at = now()
WHERE f.id = %(fact_id)s::uuid AND f.org_id = %(org_id)s AND f.user_id = %(user_id)s
  AND f.deleted_at IS NULL
  AND NOT EXISTS (SELECT 1 FROM store_items s WHERE s.fact_id = f.id)
"""
"""A fact the store wrote, once no item names it: soft-deleted like `recollect forget`."""

FORGET_UNNAMED_LIVE = (
    FORGET_UNNAMED
    + "  AND f.superseded_by IS NULL AND (f.valid_to IS NULL OR f.valid_to > %(now)s)\n"
)
"""The same, for a fact a new put replaced: one the engine superseded or ended stays as
history; one a plan ends on a day still to come is live, so it goes."""

FORGET_FACT = """
UPDATE facts SET deleted_at = now()
WHERE id = %(fact_id)s::uuid AND org_id = %(org_id)s AND user_id = %(user_id)s
  AND session_id IS NULL AND deleted_at IS NULL
"""

REFRESH_TTL = f"""
UPDATE store_items s SET expires_at = now() + s.ttl_minutes * interval '1 minute'
WHERE {_OWNER} AND s.labels = %(labels)s AND s.key = %(key)s AND s.ttl_minutes IS NOT NULL
"""
