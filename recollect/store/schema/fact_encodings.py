"""Per-fact reranker encodings, persisted so a fresh process reranks as fast as a warm one.

One row per fact and model: the late-interaction token vectors (float16, row-major, `dim` wide)
of the fact as the reranker reads it. Rows are written after the fact's own transaction commits
(or by the worker), never inside it; they go with their fact (`ON DELETE CASCADE`) and sit
behind the same per-user row-level security.
"""

from __future__ import annotations

FACT_ENCODINGS = """
CREATE TABLE fact_encodings (
    fact_id uuid NOT NULL REFERENCES facts (id) ON DELETE CASCADE,
    model text NOT NULL CHECK (length(model) BETWEEN 1 AND 200),
    org_id text NOT NULL,
    user_id text NOT NULL,
    dim smallint NOT NULL CHECK (dim > 0),
    tokens bytea NOT NULL,
    PRIMARY KEY (fact_id, model)
);
CREATE INDEX fact_encodings_owner ON fact_encodings (org_id, user_id);
SELECT recollect_protect('fact_encodings');
"""
