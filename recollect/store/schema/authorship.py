"""Who wrote a fact, so forgetting a user reaches what she wrote into shared memory.

Organisation-shared facts are stored under the reserved owner `@org`; `author_id` keeps the
user who wrote them. The column defaults to the writing transaction's scope user
(`app.user_id`, set by `scoped`), so every write path fills it without naming it; facts
written before are attributed to their owner where the owner is a person, and stay
unattributed where they were shared.

`recollect_acted_rows()` lets a user's export include what she did in other people's
workflows (audit rows where she is the actor), which her own scope cannot read; like
`recollect_forget_actor` it takes the user from the transaction's scope, never an argument.
"""

from __future__ import annotations

from recollect.store.identity import MAX_ID_LENGTH
from recollect.store.scope import ORG_OWNER

ACTED_SIGNATURE = "recollect_acted_rows()"

AUTHORSHIP_SQL = f"""
ALTER TABLE facts ADD COLUMN author_id text
    DEFAULT nullif(current_setting('app.user_id', true), '')
    CHECK (length(author_id) <= {MAX_ID_LENGTH});
UPDATE facts SET author_id = user_id WHERE user_id <> '{ORG_OWNER}';
CREATE INDEX facts_shared_author ON facts (org_id, author_id) WHERE user_id = '{ORG_OWNER}';

CREATE FUNCTION recollect_acted_rows()
RETURNS TABLE (workflow_id text, transition text, from_state text, to_state text,
               note text, at timestamptz)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    v_org text := coalesce(current_setting('app.org_id', true), '');
    v_user text := coalesce(current_setting('app.user_id', true), '');
BEGIN
    IF v_org = '' OR v_user = '' OR left(v_user, 1) = '@'
       OR coalesce(current_setting('app.scope_kind', true), '') <> 'user' THEN
        RAISE EXCEPTION 'reading a user''s actions needs the user''s own scope';
    END IF;
    RETURN QUERY
    SELECT a.workflow_id, a.transition, a.from_state, a.to_state, a.note, a.at
    FROM approval_audit AS a
    WHERE a.org_id = v_org AND a.actor = v_user AND a.user_id <> v_user
    ORDER BY a.at, a.workflow_id;
END
$$;
REVOKE EXECUTE ON FUNCTION {ACTED_SIGNATURE} FROM PUBLIC;
"""
