"""Planned facts: `valid_from` becomes a column of its own, so a plan can start later.

Until now `valid_from` was generated from `learned_at`; dropping the expression keeps every
value. A fact inserted without one still starts when it was learned (a column default cannot
name another column, so a trigger fills it; the COPY staging table of an import, made LIKE
facts, takes rows without one), and a plan is stored with the day it begins.
"""

from __future__ import annotations

VALID_FROM_SIGNATURE = "recollect_valid_from_default()"

PLANNED_FACTS = f"""
ALTER TABLE facts ALTER COLUMN valid_from DROP EXPRESSION;
CREATE FUNCTION {VALID_FROM_SIGNATURE} RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, public AS $$
BEGIN
    NEW.valid_from := coalesce(NEW.valid_from, NEW.learned_at);
    RETURN NEW;
END
$$;
REVOKE ALL ON FUNCTION {VALID_FROM_SIGNATURE} FROM PUBLIC;
CREATE TRIGGER facts_valid_from BEFORE INSERT ON facts
    FOR EACH ROW EXECUTE FUNCTION {VALID_FROM_SIGNATURE};
"""
