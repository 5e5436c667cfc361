"""Row-level security's building block and who owns each thread."""

from __future__ import annotations

PROTECT_FUNCTION = """
CREATE OR REPLACE FUNCTION recollect_protect(target regclass) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    -- Owners and superusers bypass RLS; FORCE makes the owner obey it too.
    EXECUTE format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', target);
    EXECUTE format('ALTER TABLE %s FORCE ROW LEVEL SECURITY', target);
    EXECUTE format('DROP POLICY IF EXISTS tenant_isolation ON %s', target);
    EXECUTE format(
        'CREATE POLICY tenant_isolation ON %s '
        'USING (org_id = current_setting(''app.org_id'', true) '
        '   AND user_id = current_setting(''app.user_id'', true)) '
        'WITH CHECK (org_id = current_setting(''app.org_id'', true) '
        '   AND user_id = current_setting(''app.user_id'', true))',
        target);
END
$$
"""
"""`SELECT recollect_protect('t')` puts table t behind per-user row-level security."""

THREADS = """
CREATE TABLE threads (
    thread_id text PRIMARY KEY,
    org_id text NOT NULL,
    user_id text NOT NULL,
    kind text NOT NULL DEFAULT 'agent',
    created_at timestamptz NOT NULL DEFAULT now(),
    last_active_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX threads_owner ON threads (org_id, user_id);
SELECT recollect_protect('threads');
"""
