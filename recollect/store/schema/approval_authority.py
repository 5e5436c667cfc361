"""Who may decide a workflow, and who sees it, enforced by the database.

- A decision is written only by `recollect_decide_workflow`, a `SECURITY DEFINER` function
  that takes the reviewer from the transaction's scope (`app.user_id`), requires
  `app.reviewer = 'on'` and the workflow's organisation, and refuses the requester. The app
  role may not update or insert the decision columns itself (`APP_ROLE_LIMITS`), so no code
  path can write a self-approval.
- A refund row can only be inserted for a workflow whose stored decision is an approval by
  someone other than its requester (a restrictive policy).
- Requesters read their own workflows, reviewers (`app.reviewer = 'on'`) their
  organisation's; the former `org_reads` policy let every user read everyone's.
- Order ids are unique per organisation in their normalised form (`normalise_order_id`);
  rows written before are normalised here, and a database that already paid an order twice
  stops the migration with the orders named, for a person to settle.

The tables are ENABLEd, not FORCEd, for the same reason as `memory_jobs`: the functions run as
the migrating role, and FORCE would bind it to the caller's policies. The app role owns
nothing, so the policies still bind every request.
"""

from __future__ import annotations

from typing import Any

from psycopg import Connection, sql

from recollect.store.schema.authorship import ACTED_SIGNATURE

_ORG = "org_id = current_setting('app.org_id', true)"
_REVIEWER = "current_setting('app.reviewer', true) = 'on'"
_TABLES = ("approval_workflows", "approval_audit", "refunds")

_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d\u058a\u05be\u1806"
_HYPHENS = "-" * len(_DASHES)
_INVISIBLE = "[\u00ad\u034f\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]"

DECIDE_SIGNATURE = "recollect_decide_workflow(text, text, text, timestamptz)"
FORGET_SIGNATURE = "recollect_forget_actor()"

APPROVAL_AUTHORITY_SQL = f"""
CREATE FUNCTION recollect_order_key(p_order text) RETURNS text
LANGUAGE sql IMMUTABLE SET search_path = public, pg_temp AS $$
SELECT upper(btrim(regexp_replace(
    translate(normalize(p_order, NFKC), '{_DASHES}', '{_HYPHENS}'),
    '{_INVISIBLE}', '', 'g')))
$$;

UPDATE approval_workflows
SET request = jsonb_set(request, '{{order_id}}',
                        to_jsonb(recollect_order_key(request ->> 'order_id')))
WHERE request ->> 'order_id' IS DISTINCT FROM recollect_order_key(request ->> 'order_id');

DO $$
DECLARE
    doubled text;
BEGIN
    SELECT string_agg(DISTINCT org_id || ':' || recollect_order_key(order_id), ', ')
    INTO doubled
    FROM (SELECT org_id, order_id,
                 count(*) OVER (PARTITION BY org_id, recollect_order_key(order_id)) AS n
          FROM refunds) AS r
    WHERE n > 1;
    IF doubled IS NOT NULL THEN
        RAISE EXCEPTION 'orders refunded more than once under different spellings: %; '
            'settle them by hand, then migrate again', doubled;
    END IF;
END
$$;
UPDATE refunds SET order_id = recollect_order_key(order_id)
WHERE order_id <> recollect_order_key(order_id);
CREATE UNIQUE INDEX refunds_one_per_order ON refunds (org_id, order_id);

ALTER TABLE approval_workflows NO FORCE ROW LEVEL SECURITY;
ALTER TABLE approval_audit NO FORCE ROW LEVEL SECURITY;
ALTER TABLE refunds NO FORCE ROW LEVEL SECURITY;
DROP POLICY org_reads ON approval_workflows;
DROP POLICY org_reads ON approval_audit;
DROP POLICY org_reads ON refunds;
CREATE POLICY reviewer_reads ON approval_workflows FOR SELECT USING ({_ORG} AND {_REVIEWER});
CREATE POLICY reviewer_reads ON approval_audit FOR SELECT USING ({_ORG} AND {_REVIEWER});
CREATE POLICY reviewer_reads ON refunds FOR SELECT USING ({_ORG} AND {_REVIEWER});
CREATE POLICY paid_only_when_approved ON refunds AS RESTRICTIVE FOR INSERT WITH CHECK (
    EXISTS (SELECT 1 FROM approval_workflows AS w
            WHERE w.id = refunds.workflow_id AND w.org_id = refunds.org_id
              AND w.user_id = refunds.user_id AND w.decision = 'approve'
              AND w.decided_by IS NOT NULL AND w.decided_by <> w.user_id));

CREATE FUNCTION recollect_decide_workflow(p_id text, p_decision text, p_note text,
                                          p_at timestamptz)
RETURNS text LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    v_org text := coalesce(current_setting('app.org_id', true), '');
    v_by text := coalesce(current_setting('app.user_id', true), '');
    v_state text;
    w approval_workflows%ROWTYPE;
BEGIN
    IF v_org = '' OR v_by = '' THEN
        RAISE EXCEPTION 'a decision needs a scoped transaction (organisation and reviewer)';
    END IF;
    IF coalesce(current_setting('app.reviewer', true), '') <> 'on' THEN
        RAISE EXCEPTION '% is not a reviewer of organisation %', v_by, v_org;
    END IF;
    IF p_id IS NULL OR length(p_id) > 200 THEN
        RAISE EXCEPTION 'a workflow id of at most 200 characters is required';
    END IF;
    IF p_decision IS NULL OR p_decision NOT IN ('approve', 'reject') THEN
        RAISE EXCEPTION 'a decision is approve or reject, not %', coalesce(p_decision, 'nothing');
    END IF;
    IF p_note IS NOT NULL AND length(p_note) > 2000 THEN
        RAISE EXCEPTION 'a decision note is at most 2000 characters';
    END IF;
    IF p_decision = 'reject' AND coalesce(btrim(p_note), '') = '' THEN
        RAISE EXCEPTION 'a rejection needs a reason (note)';
    END IF;
    IF p_at IS NULL THEN
        RAISE EXCEPTION 'a decision needs its time';
    END IF;
    SELECT * INTO w FROM approval_workflows WHERE id = p_id AND org_id = v_org FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no approval workflow % in organisation %', p_id, v_org;
    END IF;
    IF w.user_id = v_by THEN
        RAISE EXCEPTION '% asked for this refund and cannot decide it', v_by;
    END IF;
    IF w.decision IS NOT NULL THEN
        IF w.decision = p_decision AND w.decided_by = v_by THEN
            RETURN w.state;  -- the same decision replayed after a crash: already recorded
        END IF;
        RAISE EXCEPTION 'workflow % was already decided (%); a decision is made once',
            p_id, w.decision;
    END IF;
    IF w.state <> 'submitted_for_review' THEN
        RAISE EXCEPTION 'workflow % is not awaiting review (it is %)', p_id, w.state;
    END IF;
    v_state := CASE p_decision WHEN 'approve' THEN 'approved' ELSE 'rejected' END;
    UPDATE approval_workflows
    SET decision = p_decision, decided_by = v_by, decided_at = p_at, decision_note = p_note,
        state = v_state, updated_at = p_at
    WHERE id = p_id;
    INSERT INTO approval_audit (workflow_id, transition, org_id, user_id, from_state, to_state,
                                actor, note, at)
    VALUES (p_id, p_decision, w.org_id, w.user_id, w.state, v_state, v_by, p_note, p_at)
    ON CONFLICT (workflow_id, transition) DO NOTHING;
    RETURN v_state;
END
$$;
REVOKE EXECUTE ON FUNCTION {DECIDE_SIGNATURE} FROM PUBLIC;

CREATE TABLE recollect_pseudonym_key (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    secret text NOT NULL
);
INSERT INTO recollect_pseudonym_key (secret)
VALUES (md5(gen_random_uuid()::text) || md5(gen_random_uuid()::text));
REVOKE ALL ON recollect_pseudonym_key FROM PUBLIC;

CREATE FUNCTION recollect_forget_actor() RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    v_org text := coalesce(current_setting('app.org_id', true), '');
    v_user text := coalesce(current_setting('app.user_id', true), '');
    v_alias text;
BEGIN
    IF v_org = '' OR v_user = '' OR left(v_user, 1) = '@'
       OR coalesce(current_setting('app.scope_kind', true), '') <> 'user' THEN
        RAISE EXCEPTION 'forgetting an actor needs the user''s own scope';
    END IF;
    SELECT 'forgotten-' || left(encode(sha256(convert_to(
               k.secret || chr(31) || v_org || chr(31) || v_user, 'UTF8')), 'hex'), 12)
    INTO v_alias FROM recollect_pseudonym_key AS k;
    -- Finished workflows of others that she decided or acted in: their checkpoints hold her
    -- name and notes in LangGraph's own encoding, and the workflow table is the record.
    CREATE TEMP TABLE recollect_forget_threads ON COMMIT DROP AS
    SELECT w.thread_id FROM approval_workflows AS w
    WHERE w.org_id = v_org AND w.user_id <> v_user
      AND w.state IN ('completed', 'rejected', 'failed')
      AND (w.decided_by = v_user OR EXISTS (
          SELECT 1 FROM approval_audit AS a WHERE a.workflow_id = w.id AND a.actor = v_user));
    DELETE FROM checkpoint_writes
    WHERE thread_id IN (SELECT thread_id FROM recollect_forget_threads);
    DELETE FROM checkpoint_blobs
    WHERE thread_id IN (SELECT thread_id FROM recollect_forget_threads);
    DELETE FROM checkpoints
    WHERE thread_id IN (SELECT thread_id FROM recollect_forget_threads);
    DROP TABLE recollect_forget_threads;
    UPDATE approval_audit SET actor = v_alias, note = NULL
    WHERE org_id = v_org AND actor = v_user;
    UPDATE approval_workflows SET decided_by = v_alias, decision_note = NULL
    WHERE org_id = v_org AND decided_by = v_user;
    UPDATE refunds SET approved_by = v_alias WHERE org_id = v_org AND approved_by = v_user;
    RETURN v_alias;
END
$$;
REVOKE EXECUTE ON FUNCTION {FORGET_SIGNATURE} FROM PUBLIC;
"""

APP_ROLE_LIMITS = (
    "REVOKE INSERT, UPDATE ON approval_workflows FROM {role}",
    "GRANT INSERT (id, thread_id, org_id, user_id, kind, state, request, origin_thread_id, "
    "created_at, updated_at) ON approval_workflows TO {role}",
    "GRANT UPDATE (state, updated_at) ON approval_workflows TO {role}",
    "REVOKE UPDATE ON approval_audit, refunds FROM {role}",
    "REVOKE ALL ON recollect_pseudonym_key FROM {role}",
    f"GRANT EXECUTE ON FUNCTION {DECIDE_SIGNATURE}, {ACTED_SIGNATURE} TO {{role}}",
    f"REVOKE EXECUTE ON FUNCTION {FORGET_SIGNATURE} FROM {{role}}",
)
"""Run after the blanket table grants: the app role writes a workflow's state, never its
decision, never rewrites an audit row or a refund, never reads the pseudonym key, and never
pseudonymises anyone (`recollect_forget_actor` is the worker role's: `erasure_role`)."""


def limit_app_role(conn: Connection[Any], role: str) -> None:
    """Apply `APP_ROLE_LIMITS` to `role` (idempotent)."""
    for statement in APP_ROLE_LIMITS:
        conn.execute(sql.SQL(statement).format(role=sql.Identifier(role)))
