"""LangGraph's checkpoint tables behind row-level security, keyed by who owns the thread.

The tables come from `PostgresSaver.setup()` and carry no tenant columns, so their policy
asks `threads`: a row is visible, and may be written, when its thread belongs to the scope's
user, or is an approval workflow of the scope's organisation and the scope is a reviewer. A
connection with no scope sees no checkpoint at all. `threads` gains the matching read policy
for reviewers, since the visibility check reads it under the caller's own rights.

ENABLE without FORCE: the app role owns nothing and is bound either way, while the migrating
owner must still see every row when `PostgresSaver.setup()` migrates its own tables.
"""

from __future__ import annotations

CHECKPOINTS_BEHIND_RLS = """
CREATE POLICY reviewers_read_approval_threads ON threads FOR SELECT
USING (kind = 'approval'
       AND org_id = current_setting('app.org_id', true)
       AND current_setting('app.reviewer', true) = 'on');

CREATE FUNCTION recollect_thread_visible(p_thread text) RETURNS boolean
LANGUAGE sql STABLE SET search_path = public, pg_temp AS $$
SELECT EXISTS (
    SELECT 1 FROM threads AS t
    WHERE t.thread_id = p_thread
      AND t.org_id = current_setting('app.org_id', true)
      AND (t.user_id = current_setting('app.user_id', true)
           OR (t.kind = 'approval' AND current_setting('app.reviewer', true) = 'on')))
$$;

DO $$
DECLARE
    target text;
BEGIN
    FOREACH target IN ARRAY ARRAY['checkpoints', 'checkpoint_blobs', 'checkpoint_writes'] LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', target);
        EXECUTE format(
            'CREATE POLICY thread_owner ON %I '
            'USING (recollect_thread_visible(thread_id)) '
            'WITH CHECK (recollect_thread_visible(thread_id))', target);
    END LOOP;
END
$$;
"""
