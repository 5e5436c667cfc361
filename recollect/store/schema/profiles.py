"""The profile as one versioned document per user."""

from __future__ import annotations

PROFILE_DOCUMENTS = """
CREATE TABLE profiles_next (
    org_id text NOT NULL,
    user_id text NOT NULL,
    revision bigint NOT NULL DEFAULT 1,
    schema_version smallint NOT NULL CHECK (schema_version >= 1),
    document jsonb NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, user_id)
);
INSERT INTO profiles_next (org_id, user_id, schema_version, document, updated_at)
SELECT org_id, user_id, 1, jsonb_object_agg(key, value), max(updated_at)
FROM profiles GROUP BY org_id, user_id;
DROP TABLE profiles;
ALTER TABLE profiles_next RENAME TO profiles;
ALTER INDEX profiles_next_pkey RENAME TO profiles_pkey;
SELECT recollect_protect('profiles');
"""
"""The profile becomes one versioned document per user (see `recollect.longterm.profile`); the
old key/value rows are carried over as version 1 and migrated to the current shape on read."""
