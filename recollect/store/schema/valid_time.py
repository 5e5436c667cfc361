"""When each fact held: from its own `learned_at` until its successor's.

A merged duplicate (`merged_into`) did not end, so it gets no `valid_to`.
"""

from __future__ import annotations

VALID_TIME = """
ALTER TABLE facts
    ADD COLUMN valid_from timestamptz GENERATED ALWAYS AS (learned_at) STORED,
    ADD COLUMN valid_to timestamptz;
UPDATE facts AS old SET valid_to = new.learned_at
FROM facts AS new
WHERE old.superseded_by = new.id AND old.metadata ? 'merged_into' IS NOT TRUE;
"""
