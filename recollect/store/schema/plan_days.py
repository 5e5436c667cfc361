"""The rows whose truth changes on a day with no write: plans, and the facts plans end.

Every profile read applies the plans whose day has come (`recollect.longterm.profile.
profile_now`), so it asks for those rows each time; a partial index keeps that a lookup of the
few such rows of one user instead of a pass over all their facts.
"""

from __future__ import annotations

PLAN_DAY = "(valid_from > learned_at OR metadata ? 'replaced_by_plan')"
"""A plan, or a fact a plan ends on its day. Reads spell the index's predicate exactly so the
planner can use it (`recollect.longterm.fact_sql.PLAN_DAYS`)."""

PLAN_DAYS_INDEX = f"""
CREATE INDEX facts_plan_days ON facts (org_id, user_id, session_id)
    WHERE deleted_at IS NULL AND {PLAN_DAY};
"""
