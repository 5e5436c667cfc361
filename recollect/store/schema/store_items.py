"""Store items: the `(namespace, key)` handles LangGraph's `BaseStore` API puts on facts.

A fact is what recall ranks; an item is a caller's name for one (`recollect.basestore`): its
namespace labels, its key, the value as the caller wrote it (redacted where screening
redacted), and an optional expiry. Several items may name one fact (a put that repeats a
known fact reinforces it instead of storing a copy). Erasing a fact erases its items
(`ON DELETE CASCADE`); the same per-user and organisation-shared policies as `facts` apply.
"""

from __future__ import annotations

from recollect.store.identity import MAX_ID_LENGTH
from recollect.store.scope import ORG_OWNER

MAX_KEY_LENGTH = 512
MAX_LABELS = 8

_SHARED = f"user_id = '{ORG_OWNER}' AND org_id = current_setting('app.org_id', true)"
_ORG_WRITER = f"{_SHARED} AND current_setting('app.scope_kind', true) = 'org'"

STORE_ITEMS_SQL = f"""
CREATE TABLE store_items (
    org_id text NOT NULL CHECK (length(org_id) <= {MAX_ID_LENGTH}),
    user_id text NOT NULL CHECK (length(user_id) <= {MAX_ID_LENGTH}),
    labels text[] NOT NULL CHECK (cardinality(labels) <= {MAX_LABELS}),
    key text NOT NULL CHECK (length(key) BETWEEN 1 AND {MAX_KEY_LENGTH}),
    fact_id uuid NOT NULL REFERENCES facts (id) ON DELETE CASCADE,
    value jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    ttl_minutes double precision CHECK (ttl_minutes > 0),
    expires_at timestamptz,
    PRIMARY KEY (org_id, user_id, labels, key)
);
CREATE INDEX store_items_fact ON store_items (fact_id);
CREATE INDEX store_items_expiry ON store_items (org_id, user_id, expires_at)
    WHERE expires_at IS NOT NULL;
SELECT recollect_protect('store_items');
CREATE POLICY org_shared_reads ON store_items FOR SELECT USING ({_SHARED});
CREATE POLICY org_shared_inserts ON store_items FOR INSERT WITH CHECK ({_ORG_WRITER});
CREATE POLICY org_shared_updates ON store_items FOR UPDATE USING ({_ORG_WRITER})
    WITH CHECK ({_ORG_WRITER});
CREATE POLICY org_shared_deletes ON store_items FOR DELETE USING ({_ORG_WRITER});
"""
