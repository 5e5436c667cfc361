"""Memory traces: what went into each turn's prompt, and what the background job decided."""

from __future__ import annotations

MEMORY_TRACES = """
CREATE TABLE memory_traces (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    org_id text NOT NULL,
    user_id text NOT NULL,
    thread_id text NOT NULL,
    turn integer NOT NULL CHECK (turn >= 0),
    kind text NOT NULL CHECK (kind IN ('turn', 'extraction')),
    checkpoint_bytes bigint,
    created_at timestamptz NOT NULL DEFAULT now(),
    trace jsonb NOT NULL
);
CREATE INDEX memory_traces_thread ON memory_traces (org_id, user_id, thread_id, turn);
CREATE INDEX memory_traces_recent ON memory_traces (org_id, user_id, created_at);
SELECT recollect_protect('memory_traces');
"""
"""One row per turn (`kind = 'turn'`: prompt tokens and budgets, recall candidates, pins,
summary, trimmed ids) and one per extraction job (`'extraction'`: each candidate fact's
verdict), keyed by org, user, thread and turn, behind the same per-user row-level security as
facts, and erased with the user's other rows by `forget`."""

TRACES_BY_AGE = """
CREATE INDEX memory_traces_age ON memory_traces (created_at);
"""
"""Maintenance deletes traces past their retention across every tenant: by age alone."""
