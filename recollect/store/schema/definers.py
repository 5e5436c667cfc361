"""The cross-tenant functions, owned by a role that can do nothing else and callable only by
whom each is for, with every argument bounded.

The definer role (no login) owns them and reaches `memory_jobs` through a policy of its own;
the worker role (the background worker and operator commands) may call the cross-tenant ones;
the app role, which serves requests, may claim only its own scope's jobs
(`recollect_claim_own_job`) and fail a job only with that job's claim token. Nobody else may
call any of them (EXECUTE is revoked from PUBLIC from every `recollect_` function), and
`recollect_protect`, a migration helper, is the migrating role's alone. The approval and
erasure functions (`approval_authority`, `authorship`) belong to the definer role as well; each
acts only for the calling scope's own identity, which it reads from the scope's settings. The
roles themselves are created (or checked) before migrating, by `role_setup`, since their names
are configurable; grants to the app role are made there too.

Handing a function to the definer needs the definer to be allowed to create in the schema, so
the migration grants that for the hand-over and revokes it after.
"""

from __future__ import annotations

from recollect.store.roles import RoleNames

DEFINER_ROLE = "recollect_definer"
"""The definer role's default name (`RECOLLECT_ROLE_PREFIX` unset)."""
WORKER_ROLE = "recollect_worker"
"""The worker role's default name."""
MAX_LEASE_S = 3600
MAX_BACKOFF_S = 86_400
MAX_LIST_LIMIT = 1000
MAX_RETENTION_DAYS = 36_500

_BAD_ARGUMENT = "22023"  # invalid_parameter_value

JOB_FUNCTIONS = (
    "recollect_claim_job",
    "recollect_claim_job_for_models",
    "recollect_claim_own_job",
    "recollect_fail_job",
    "recollect_open_jobs",
    "recollect_job_counts",
    "recollect_dead_jobs",
    "recollect_retry_dead_job",
    "recollect_prune_jobs",
    "recollect_idle_threads",
)
"""The functions that reach across tenants' jobs: owned by the definer role, callable by the
worker role (the app role gets only its own-scope claim and the token-bound fail)."""
JOB_FUNCTIONS_SQL = "ARRAY[" + ", ".join(f"'{name}'" for name in JOB_FUNCTIONS) + "]"
SCOPE_FUNCTIONS = ("recollect_decide_workflow", "recollect_forget_actor", "recollect_acted_rows")
"""Functions that act for the calling scope's own identity (read from its settings): owned by
the definer role too, and callable by the app role only (granted where they are created)."""
SCOPE_FUNCTIONS_SQL = "ARRAY[" + ", ".join(f"'{name}'" for name in SCOPE_FUNCTIONS) + "]"
DEFINER_REACHES = (
    ("approval_workflows", "SELECT, UPDATE"),
    ("approval_audit", "SELECT, INSERT, UPDATE"),
    ("refunds", "SELECT, UPDATE"),
    ("checkpoints", "SELECT, DELETE"),
    ("checkpoint_blobs", "SELECT, DELETE"),
    ("checkpoint_writes", "SELECT, DELETE"),
)
"""What the scope functions touch: the rights, and a row-level security policy of the definer's
own on each table (the functions themselves decide whose rows, from the caller's scope)."""


def _reach_sql(definer: str) -> str:
    return "\n".join(
        f"GRANT {rights} ON {table} TO {definer};\n"
        f"CREATE POLICY definer_acts_for_the_caller ON {table} TO {definer} "
        "USING (true) WITH CHECK (true);"
        for table, rights in DEFINER_REACHES
    )


_CLAIM_BODY = """
    IF p_lease IS NULL OR p_lease <= 0 OR p_lease > {max_lease} THEN
        RAISE EXCEPTION 'lease must be more than 0 and at most {max_lease} seconds, got %', p_lease
            USING ERRCODE = '{bad}';
    END IF;
    RETURN QUERY
    UPDATE memory_jobs AS j
    SET status = 'running', attempts = j.attempts + 1, claim_token = p_token,
        lease_until = now() + make_interval(secs => p_lease), updated_at = now()
    WHERE j.id = (
        SELECT c.id FROM memory_jobs AS c
        WHERE ((c.status = 'pending' AND (c.run_after <= now() OR p_ignore_debounce))
               OR (c.status = 'running' AND c.lease_until < now()))
          AND (p_thread IS NULL OR c.thread_id = p_thread)
          {own_scope}{models}
          AND NOT EXISTS (
              SELECT 1 FROM memory_jobs AS r
              WHERE r.org_id = c.org_id AND r.user_id = c.user_id AND r.thread_id = c.thread_id
                AND r.id <> c.id AND r.status = 'running' AND r.lease_until >= now())
        ORDER BY c.run_after, c.id
        LIMIT 1
        FOR UPDATE SKIP LOCKED)
    RETURNING j.*;
"""
_OWN_SCOPE = """AND c.org_id = current_setting('app.org_id', true)
          AND c.user_id = current_setting('app.user_id', true)"""


_FOR_MODELS = """
          AND (c.model = '' OR c.model = ANY(p_models))"""


def _claim(name: str, own_scope: str = "", models: bool = False) -> str:
    body = _CLAIM_BODY.format(
        max_lease=MAX_LEASE_S,
        bad=_BAD_ARGUMENT,
        own_scope=own_scope,
        models=_FOR_MODELS if models else "",
    )
    extra = ", p_models text[]" if models else ""
    return f"""
CREATE OR REPLACE FUNCTION {name}(p_token uuid, p_lease float8, p_thread text,
                                  p_ignore_debounce boolean{extra})
RETURNS SETOF memory_jobs LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
{body}
END
$$;
"""


def _bounded(name: str, arg: str, low: float, high: float) -> str:
    return f"""
    IF {arg} IS NULL OR {arg} < {low} OR {arg} > {high} THEN
        RAISE EXCEPTION '{name}: {arg} must be {low} to {high}, got %', {arg}
            USING ERRCODE = '{_BAD_ARGUMENT}';
    END IF;"""


def definers_sql(roles: RoleNames) -> str:
    """Migration: bounded function bodies, handed to the definer role, EXECUTE to the worker."""
    definer, worker = roles.definer, roles.worker
    return f"""
GRANT USAGE ON SCHEMA public TO {definer};
GRANT SELECT, UPDATE, DELETE ON memory_jobs TO {definer};
CREATE POLICY definer_reaches_every_job ON memory_jobs TO {definer}
    USING (true) WITH CHECK (true);
GRANT SELECT ON recollect_pseudonym_key TO {definer};
{_reach_sql(definer)}

{_claim("recollect_claim_job")}
{_claim("recollect_claim_job_for_models", models=True)}
{_claim("recollect_claim_own_job", _OWN_SCOPE)}

CREATE OR REPLACE FUNCTION recollect_fail_job(p_id bigint, p_token uuid, p_error text,
                                              p_max_attempts integer, p_backoff float8)
RETURNS SETOF text LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN{_bounded("recollect_fail_job", "p_max_attempts", 0, 100)}{
        _bounded("recollect_fail_job", "p_backoff", 0, MAX_BACKOFF_S)
    }
    RETURN QUERY
    UPDATE memory_jobs AS j
    SET status = CASE
            WHEN j.attempts >= p_max_attempts THEN 'dead'
            WHEN EXISTS (SELECT 1 FROM memory_jobs AS p
                         WHERE p.org_id = j.org_id AND p.user_id = j.user_id
                           AND p.thread_id = j.thread_id AND p.status = 'pending')
                THEN 'superseded'
            ELSE 'pending' END,
        run_after = now() + make_interval(secs => p_backoff),
        last_error = left(p_error, 2000), lease_until = NULL, claim_token = NULL,
        updated_at = now(),
        finished_at = CASE WHEN j.attempts >= p_max_attempts THEN now() END
    WHERE j.id = p_id AND j.claim_token = p_token AND p_token IS NOT NULL
    RETURNING j.status;
END
$$;

CREATE OR REPLACE FUNCTION recollect_dead_jobs(p_limit integer)
RETURNS TABLE (id bigint, org_id text, user_id text, thread_id text, attempts integer,
               last_error text, finished_at timestamptz)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN{_bounded("recollect_dead_jobs", "p_limit", 1, MAX_LIST_LIMIT)}
    RETURN QUERY
    SELECT j.id, j.org_id, j.user_id, j.thread_id, j.attempts, j.last_error, j.finished_at
    FROM memory_jobs AS j WHERE j.status = 'dead' ORDER BY j.id DESC LIMIT p_limit;
END
$$;

CREATE OR REPLACE FUNCTION recollect_prune_jobs(p_days float8) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    gone bigint;
BEGIN{_bounded("recollect_prune_jobs", "p_days", 1, MAX_RETENTION_DAYS)}
    DELETE FROM memory_jobs
    WHERE status IN ('done', 'superseded') AND updated_at < now() - p_days * interval '1 day';
    GET DIAGNOSTICS gone = ROW_COUNT;
    RETURN gone;
END
$$;

CREATE OR REPLACE FUNCTION recollect_idle_threads(p_idle_s float8, p_limit integer)
RETURNS TABLE (org_id text, user_id text, thread_id text, last_active timestamptz)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN{_bounded("recollect_idle_threads", "p_idle_s", 0, MAX_RETENTION_DAYS * 86_400)}{
        _bounded("recollect_idle_threads", "p_limit", 1, MAX_LIST_LIMIT)
    }
    RETURN QUERY
    SELECT j.org_id, j.user_id, j.thread_id, max(j.updated_at) FROM memory_jobs AS j
    WHERE j.episode_at IS NULL
    GROUP BY j.org_id, j.user_id, j.thread_id
    HAVING max(j.updated_at) < now() - make_interval(secs => p_idle_s)
    ORDER BY max(j.updated_at)
    LIMIT p_limit;
END
$$;

GRANT CREATE ON SCHEMA public TO {definer};
DO $$
DECLARE
    fn regprocedure;
BEGIN
    FOR fn IN
        SELECT p.oid::regprocedure FROM pg_proc AS p
        WHERE p.pronamespace = 'public'::regnamespace AND p.proname LIKE 'recollect\\_%'
    LOOP
        EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', fn);
    END LOOP;
    FOR fn IN
        SELECT p.oid::regprocedure FROM pg_proc AS p
        WHERE p.pronamespace = 'public'::regnamespace AND p.proname = ANY({JOB_FUNCTIONS_SQL})
    LOOP
        EXECUTE format('ALTER FUNCTION %s OWNER TO {definer}', fn);
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO {worker}', fn);
    END LOOP;
    FOR fn IN
        SELECT p.oid::regprocedure FROM pg_proc AS p
        WHERE p.pronamespace = 'public'::regnamespace AND p.proname = ANY({SCOPE_FUNCTIONS_SQL})
    LOOP
        EXECUTE format('ALTER FUNCTION %s OWNER TO {definer}', fn);
    END LOOP;
END
$$;
REVOKE CREATE ON SCHEMA public FROM {definer};
"""
