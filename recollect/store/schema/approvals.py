"""Approval workflows, their audit trail and the refunds they execute."""

from __future__ import annotations

CREATE_APPROVALS = """
CREATE TABLE approval_workflows (
    id text PRIMARY KEY,
    thread_id text NOT NULL UNIQUE,
    org_id text NOT NULL,
    user_id text NOT NULL,
    kind text NOT NULL,
    state text NOT NULL CHECK (state IN ('draft', 'submitted_for_review', 'approved',
        'rejected', 'executing', 'completed', 'failed')),
    request jsonb NOT NULL,
    decision text CHECK (decision IN ('approve', 'reject')),
    decided_by text,
    decided_at timestamptz,
    decision_note text,
    origin_thread_id text,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);
CREATE INDEX approval_workflows_org_state ON approval_workflows (org_id, state, created_at);
CREATE INDEX approval_workflows_owner ON approval_workflows (org_id, user_id, created_at);
CREATE TABLE approval_audit (
    workflow_id text NOT NULL REFERENCES approval_workflows (id) ON DELETE CASCADE,
    transition text NOT NULL,
    org_id text NOT NULL,
    user_id text NOT NULL,
    from_state text,
    to_state text NOT NULL,
    actor text NOT NULL,
    note text,
    at timestamptz NOT NULL,
    PRIMARY KEY (workflow_id, transition)
);
CREATE TABLE refunds (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workflow_id text NOT NULL UNIQUE REFERENCES approval_workflows (id),
    org_id text NOT NULL,
    user_id text NOT NULL,
    order_id text NOT NULL,
    amount numeric(12, 2) NOT NULL CHECK (amount > 0),
    currency text NOT NULL,
    reason text NOT NULL,
    approved_by text NOT NULL,
    executed_at timestamptz NOT NULL,
    UNIQUE (org_id, user_id, order_id)
);
DO $$
DECLARE
    target text;
BEGIN
    -- Reviewers read their organisation's workflows; only the owner's scope writes them.
    FOREACH target IN ARRAY ARRAY['approval_workflows', 'approval_audit', 'refunds'] LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', target);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', target);
        EXECUTE format(
            'CREATE POLICY org_reads ON %I FOR SELECT '
            'USING (org_id = current_setting(''app.org_id'', true))', target);
        EXECUTE format(
            'CREATE POLICY owner_writes ON %I '
            'USING (org_id = current_setting(''app.org_id'', true) '
            '   AND user_id = current_setting(''app.user_id'', true)) '
            'WITH CHECK (org_id = current_setting(''app.org_id'', true) '
            '   AND user_id = current_setting(''app.user_id'', true))', target);
    END LOOP;
END
$$;
"""
"""Approval workflows, their audit trail and the refunds they execute. Reviewers read their
organisation's workflows; only the owner's scope writes them."""
