"""Each word of a large user's facts, listed with the facts that hold it: lexical recall by
lookup instead of a pass over every fact.

Behind row-level security `@@` can use no index (`schema.covering_reads`), so a user's lexical
read tests every unended fact's words in `facts_live_words`: about 0.5 us a fact, 5.7 ms at
10,000 facts and 34 ms at 100,000. Text equality is leakproof, so a btree keyed by user and word
can answer behind the policies: the facts sharing a word with the question are found in a few
index lookups and only those are scored (0.6 ms and 8.6 ms; `bench.recall_latency`).

Only users with at least `WORDED_FROM` facts have their words listed (`worded_scopes` says who):
below it the covering index costs under half a millisecond, and the list would grow every
fact's write by about ten index entries. A statement trigger keeps the list: after any insert of
durable facts it takes the user's write lock (`fact_sql.LOCK_USER`), then lists the new facts'
words if the user is listed, or, once the user reaches `WORDED_FROM` facts, lists every fact
the user has and marks the user, in the inserting transaction (users who had that many before
the list existed are listed by the migration). Taking the lock first means a concurrent insert
is either committed before the backfill reads, or waits and sees the mark.

Every fact of a listed user is listed, ended or not (a deleted fact can be restored), and each
entry goes with its fact (first by a foreign key, now by a trigger: `schema.unlisting`).
Recall checks the fact's row, so an entry of an ended fact is never shown. Organisation-shared
facts and session facts are not listed (their reads keep the covering index). A role that obeys
the policies can insert only the facts of the user its settings name, so the trigger lists
exactly those; one that bypasses them lists any user's.
"""

from __future__ import annotations

from recollect.store.schema.covering_reads import UNENDED, WORDED
from recollect.store.scope import ORG_OWNER

WORDED_FROM = 1000
"""Unended facts from which a user's words are listed: at 1,000 facts the covering index costs
about 0.5 ms a read and the lookup about 0.3."""
TENANT_LEXEME_MARK = "~"
"""The first character of the tenant's own lexeme in `search`, which is not a word."""

_LISTS_WORDS = """
    (NOT row_security_active('fact_words')
     OR (s.org_id = current_setting('app.org_id', true)
         AND s.user_id = current_setting('app.user_id', true)))"""

FACT_WORDS_SQL = f"""
CREATE TABLE worded_scopes (
    org_id text NOT NULL,
    user_id text NOT NULL,
    worded_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, user_id)
);

CREATE TABLE fact_words (
    org_id text NOT NULL,
    user_id text NOT NULL,
    lexeme text NOT NULL,
    fact_id uuid NOT NULL REFERENCES facts (id) ON DELETE CASCADE,
    PRIMARY KEY (org_id, user_id, lexeme, fact_id)
);
CREATE INDEX fact_words_fact ON fact_words (fact_id);

INSERT INTO worded_scopes (org_id, user_id)
SELECT org_id, user_id FROM facts
WHERE session_id IS NULL AND user_id <> '{ORG_OWNER}' AND {UNENDED} AND {WORDED}
GROUP BY org_id, user_id HAVING count(*) >= {WORDED_FROM};
INSERT INTO fact_words (org_id, user_id, lexeme, fact_id)
SELECT f.org_id, f.user_id, word.lexeme, f.id
FROM facts AS f JOIN worded_scopes USING (org_id, user_id),
     unnest(tsvector_to_array(f.search)) AS word (lexeme)
WHERE f.session_id IS NULL AND left(word.lexeme, 1) <> '{TENANT_LEXEME_MARK}';
SELECT recollect_protect('worded_scopes');
SELECT recollect_protect('fact_words');

CREATE FUNCTION recollect_list_fact_words() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    s record;
BEGIN
    FOR s IN
        SELECT DISTINCT org_id, user_id FROM added_facts
        WHERE session_id IS NULL AND user_id <> '{ORG_OWNER}'
    LOOP
        CONTINUE WHEN NOT {_LISTS_WORDS};
        PERFORM pg_advisory_xact_lock(hashtextextended(s.org_id || chr(31) || s.user_id, 0));
        IF EXISTS (SELECT 1 FROM worded_scopes AS w
                   WHERE w.org_id = s.org_id AND w.user_id = s.user_id) THEN
            INSERT INTO fact_words (org_id, user_id, lexeme, fact_id)
            SELECT a.org_id, a.user_id, word.lexeme, a.id
            FROM added_facts AS a, unnest(tsvector_to_array(a.search)) AS word (lexeme)
            WHERE a.org_id = s.org_id AND a.user_id = s.user_id AND a.session_id IS NULL
              AND left(word.lexeme, 1) <> '{TENANT_LEXEME_MARK}';
        ELSIF (SELECT count(*) FROM (
                   SELECT 1 FROM facts AS f
                   WHERE f.org_id = s.org_id AND f.user_id = s.user_id AND f.session_id IS NULL
                     AND {UNENDED} AND {WORDED}
                   LIMIT {WORDED_FROM}) AS capped) >= {WORDED_FROM} THEN
            INSERT INTO worded_scopes (org_id, user_id) VALUES (s.org_id, s.user_id);
            INSERT INTO fact_words (org_id, user_id, lexeme, fact_id)
            SELECT f.org_id, f.user_id, word.lexeme, f.id
            FROM facts AS f, unnest(tsvector_to_array(f.search)) AS word (lexeme)
            WHERE f.org_id = s.org_id AND f.user_id = s.user_id AND f.session_id IS NULL
              AND left(word.lexeme, 1) <> '{TENANT_LEXEME_MARK}';
        END IF;
    END LOOP;
    RETURN NULL;
END
$$;

REVOKE ALL ON FUNCTION recollect_list_fact_words() FROM PUBLIC;
CREATE TRIGGER facts_list_words AFTER INSERT ON facts
    REFERENCING NEW TABLE AS added_facts
    FOR EACH STATEMENT EXECUTE FUNCTION recollect_list_fact_words();
"""
"""Users who already have `WORDED_FROM` facts are listed by the migration itself, before the
tables are put behind row-level security (it runs as the owner, seeing every row)."""
