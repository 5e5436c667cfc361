"""The background extraction queue: jobs, the messages they read, and candidate facts."""

from __future__ import annotations

CREATE_EXTRACTION_QUEUE = """
CREATE TABLE memory_jobs (
    id bigserial PRIMARY KEY,
    org_id text NOT NULL,
    user_id text NOT NULL,
    session_id text,
    thread_id text NOT NULL,
    status text NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'running', 'done', 'dead', 'superseded')),
    turns integer NOT NULL DEFAULT 1,
    model text NOT NULL DEFAULT '',
    min_confidence real NOT NULL DEFAULT 0.7,
    run_after timestamptz NOT NULL DEFAULT now(),
    attempts integer NOT NULL DEFAULT 0,
    lease_until timestamptz,
    claim_token uuid,
    last_error text,
    facts_found integer,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz
);
CREATE UNIQUE INDEX memory_jobs_one_pending_per_thread
    ON memory_jobs (org_id, user_id, thread_id) WHERE status = 'pending';
CREATE INDEX memory_jobs_due ON memory_jobs (run_after) WHERE status IN ('pending', 'running');
CREATE INDEX memory_jobs_thread ON memory_jobs (org_id, user_id, thread_id, status);

CREATE TABLE memory_job_messages (
    org_id text NOT NULL,
    user_id text NOT NULL,
    session_id text,
    thread_id text NOT NULL,
    message_id text NOT NULL,
    seq bigserial,
    role text NOT NULL,
    content text,
    queued_at timestamptz NOT NULL DEFAULT now(),
    extracted_at timestamptz,
    PRIMARY KEY (org_id, user_id, thread_id, message_id)
);
CREATE INDEX memory_job_messages_pending
    ON memory_job_messages (org_id, user_id, thread_id, seq) WHERE extracted_at IS NULL;

CREATE TABLE fact_candidates (
    id bigserial PRIMARY KEY,
    org_id text NOT NULL,
    user_id text NOT NULL,
    session_id text,
    thread_id text,
    job_id bigint REFERENCES memory_jobs (id) ON DELETE SET NULL,
    text text NOT NULL,
    category text NOT NULL,
    subject text,
    confidence real NOT NULL CHECK (confidence BETWEEN 0 AND 1),
    source_message_ids text[] NOT NULL DEFAULT '{}',
    status text NOT NULL CHECK (status IN ('stored', 'review', 'rejected', 'dismissed')),
    reasons text[] NOT NULL DEFAULT '{}',
    dedup_key text NOT NULL,
    fact_id text,
    created_at timestamptz NOT NULL DEFAULT now(),
    decided_at timestamptz
);
CREATE INDEX fact_candidates_by_user ON fact_candidates (org_id, user_id, status, created_at);
SELECT recollect_protect('memory_job_messages');
SELECT recollect_protect('fact_candidates');
"""
"""Background extraction: a debounced job per thread, the messages it will read (content is
cleared once extracted), and every candidate fact with its verdict (the review queue is the
`review` rows)."""
