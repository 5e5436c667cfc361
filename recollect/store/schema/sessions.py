"""Session ends: one episode per ended thread, and the inactivity sweep."""

from __future__ import annotations

SESSION_ENDS = """
ALTER TABLE threads ADD COLUMN ended_at timestamptz;
ALTER TABLE memory_jobs ADD COLUMN episode_at timestamptz;
CREATE INDEX memory_jobs_open_sessions ON memory_jobs (updated_at) WHERE episode_at IS NULL;

CREATE FUNCTION recollect_idle_threads(p_idle_s float8, p_limit integer)
RETURNS TABLE (org_id text, user_id text, thread_id text, last_active timestamptz)
LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp AS $$
SELECT j.org_id, j.user_id, j.thread_id, max(j.updated_at) FROM memory_jobs AS j
WHERE j.episode_at IS NULL
GROUP BY j.org_id, j.user_id, j.thread_id
HAVING max(j.updated_at) < now() - make_interval(secs => p_idle_s)
   AND bool_and(j.status IN ('done', 'dead', 'superseded'))
ORDER BY max(j.updated_at)
LIMIT p_limit
$$;
"""
"""A session ends once (explicitly, on exit, or after inactivity) and leaves one episode;
`memory_jobs.episode_at` lets the inactivity sweep skip sessions already summarised. The sweep
looks across tenants, so (like the worker's claim) it is a definer function: the app role sees
only its scope's rows of `memory_jobs`."""
