"""`memory_jobs` behind row-level security, with the worker's cross-tenant steps as functions.

The worker claims the next due job of any tenant, and operators count, list dead letters,
retry and prune across tenants; those few statements are `SECURITY DEFINER` functions owned
by the migrating role, so the app role reaches other tenants' jobs only through them and a
plain `SELECT` on `memory_jobs` shows the scope's own jobs. The table is ENABLEd, not FORCEd:
FORCE would bind the functions' owner too, and a non-superuser owner would then claim nothing.
Enqueueing and finishing a job run inside the job's own `scoped` transaction, under the policy.
"""

from __future__ import annotations

_TENANT = (
    "org_id = current_setting('app.org_id', true) "
    "AND user_id = current_setting('app.user_id', true)"
)

PROTECT_MEMORY_JOBS_SQL = f"""
ALTER TABLE memory_jobs ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory_jobs USING ({_TENANT}) WITH CHECK ({_TENANT});

CREATE FUNCTION recollect_claim_job(p_token uuid, p_lease float8, p_thread text,
                                    p_ignore_debounce boolean)
RETURNS SETOF memory_jobs LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp AS $$
UPDATE memory_jobs AS j
SET status = 'running', attempts = j.attempts + 1, claim_token = p_token,
    lease_until = now() + make_interval(secs => p_lease), updated_at = now()
WHERE j.id = (
    SELECT c.id FROM memory_jobs AS c
    WHERE ((c.status = 'pending' AND (c.run_after <= now() OR p_ignore_debounce))
           OR (c.status = 'running' AND c.lease_until < now()))
      AND (p_thread IS NULL OR c.thread_id = p_thread)
      AND NOT EXISTS (
          SELECT 1 FROM memory_jobs AS r
          WHERE r.org_id = c.org_id AND r.user_id = c.user_id AND r.thread_id = c.thread_id
            AND r.id <> c.id AND r.status = 'running' AND r.lease_until >= now())
    ORDER BY c.run_after, c.id
    LIMIT 1
    FOR UPDATE SKIP LOCKED)
RETURNING j.*
$$;

CREATE FUNCTION recollect_fail_job(p_id bigint, p_token uuid, p_error text,
                                   p_max_attempts integer, p_backoff float8)
RETURNS SETOF text LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp AS $$
UPDATE memory_jobs AS j
SET status = CASE
        WHEN j.attempts >= p_max_attempts THEN 'dead'
        WHEN EXISTS (SELECT 1 FROM memory_jobs AS p
                     WHERE p.org_id = j.org_id AND p.user_id = j.user_id
                       AND p.thread_id = j.thread_id AND p.status = 'pending') THEN 'superseded'
        ELSE 'pending' END,
    run_after = now() + make_interval(secs => p_backoff),
    last_error = p_error, lease_until = NULL, claim_token = NULL, updated_at = now(),
    finished_at = CASE WHEN j.attempts >= p_max_attempts THEN now() END
WHERE j.id = p_id AND j.claim_token = p_token
RETURNING j.status
$$;

CREATE FUNCTION recollect_open_jobs() RETURNS bigint
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
SELECT count(*) FROM memory_jobs
WHERE status = 'pending' OR (status = 'running' AND lease_until >= now())
$$;

CREATE FUNCTION recollect_job_counts() RETURNS TABLE (status text, n bigint)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
SELECT status, count(*) FROM memory_jobs GROUP BY status ORDER BY status
$$;

CREATE FUNCTION recollect_dead_jobs(p_limit integer)
RETURNS TABLE (id bigint, org_id text, user_id text, thread_id text, attempts integer,
               last_error text, finished_at timestamptz)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
SELECT id, org_id, user_id, thread_id, attempts, last_error, finished_at
FROM memory_jobs WHERE status = 'dead' ORDER BY id DESC LIMIT p_limit
$$;

CREATE FUNCTION recollect_retry_dead_job(p_id bigint) RETURNS SETOF bigint
LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp AS $$
UPDATE memory_jobs AS j
SET status = 'pending', attempts = 0, run_after = now(), finished_at = NULL, updated_at = now()
WHERE j.id = p_id AND j.status = 'dead'
  AND NOT EXISTS (SELECT 1 FROM memory_jobs AS p
                  WHERE p.org_id = j.org_id AND p.user_id = j.user_id
                    AND p.thread_id = j.thread_id AND p.status = 'pending')
RETURNING j.id
$$;

CREATE FUNCTION recollect_prune_jobs(p_days float8) RETURNS bigint
LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp AS $$
WITH gone AS (
    DELETE FROM memory_jobs
    WHERE status IN ('done', 'superseded') AND updated_at < now() - p_days * interval '1 day'
    RETURNING 1)
SELECT count(*) FROM gone
$$;
"""

CLAIM_JOB_FOR_MODELS_SQL = """
CREATE FUNCTION recollect_claim_job_for_models(p_token uuid, p_lease float8, p_thread text,
                                               p_ignore_debounce boolean, p_models text[])
RETURNS SETOF memory_jobs LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp AS $$
UPDATE memory_jobs AS j
SET status = 'running', attempts = j.attempts + 1, claim_token = p_token,
    lease_until = now() + make_interval(secs => p_lease), updated_at = now()
WHERE j.id = (
    SELECT c.id FROM memory_jobs AS c
    WHERE ((c.status = 'pending' AND (c.run_after <= now() OR p_ignore_debounce))
           OR (c.status = 'running' AND c.lease_until < now()))
      AND (p_thread IS NULL OR c.thread_id = p_thread)
      AND (c.model = '' OR c.model = ANY(p_models))
      AND NOT EXISTS (
          SELECT 1 FROM memory_jobs AS r
          WHERE r.org_id = c.org_id AND r.user_id = c.user_id AND r.thread_id = c.thread_id
            AND r.id <> c.id AND r.status = 'running' AND r.lease_until >= now())
    ORDER BY c.run_after, c.id
    LIMIT 1
    FOR UPDATE SKIP LOCKED)
RETURNING j.*
$$;
"""
"""The claim for a worker that runs only some models (the chat's own background worker): a job
queued for another model stays pending for a worker that has it. An empty model means "the
worker's default", which any worker has. Same definer rights as `recollect_claim_job`."""
