"""A fact's listed words are deleted with it by a statement trigger instead of a foreign key.

`fact_words` began with a foreign key to `facts` (`ON DELETE CASCADE`). A foreign key checks the
referenced row for every inserted entry: a query and a row lock for each of the ten or so words
of every listed fact. Without it, an import whose facts were mostly listed users' ran 1.14 times
as fast (two databases of one server side by side, three runs). Nothing else needs the check:
only the listing trigger writes entries, from rows it has just read.

The deletes the cascade made are made by a statement trigger: after a `DELETE` on `facts` it
deletes the entries of the removed facts (by `fact_words_fact`), and after a `TRUNCATE` it
empties the list and the marks. It runs with the rights and the policies of whoever deletes: a
role that may delete a user's durable fact may delete that user's entries (the same per-user
policy covers both tables, and every role granted `DELETE` on one has it on the other), so
retention purges, session ends and erasure leave no entry behind.
"""

from __future__ import annotations

from recollect.store.scope import ORG_OWNER

UNLISTING_SQL = f"""
ALTER TABLE fact_words DROP CONSTRAINT fact_words_fact_id_fkey;

CREATE FUNCTION recollect_unlist_fact_words() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM fact_words AS w
    USING removed_facts AS r
    WHERE w.fact_id = r.id AND r.session_id IS NULL AND r.user_id <> '{ORG_OWNER}';
    RETURN NULL;
END
$$;
REVOKE ALL ON FUNCTION recollect_unlist_fact_words() FROM PUBLIC;
CREATE TRIGGER facts_unlist_words AFTER DELETE ON facts
    REFERENCING OLD TABLE AS removed_facts
    FOR EACH STATEMENT EXECUTE FUNCTION recollect_unlist_fact_words();

CREATE FUNCTION recollect_unlist_every_fact_word() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    TRUNCATE fact_words, worded_scopes;
    RETURN NULL;
END
$$;
REVOKE ALL ON FUNCTION recollect_unlist_every_fact_word() FROM PUBLIC;
CREATE TRIGGER facts_unlist_every_word AFTER TRUNCATE ON facts
    FOR EACH STATEMENT EXECUTE FUNCTION recollect_unlist_every_fact_word();
"""
"""Only durable facts of a user are listed (`schema.fact_words`), so a session's or the
organisation's deleted facts cost the trigger no lookup."""
