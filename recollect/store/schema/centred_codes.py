"""A large user's binary codes are the signs of their vectors less the user's mean vector.

A code is the signs of a vector's components (`schema.covering_reads`). A sentence embedder puts
its vectors in one narrow cone, so most components have one sign in nearly every vector and the
codes cannot tell the nearest facts from the rest: with the offline embedder, LoCoMo's questions
differ from its facts in 0.138 of their signs, and such a user is ranked exactly
(`fact_sql.CODES_SPREAD`), about three times slower than by codes at 100,000 facts. Less the
vectors' mean, each component's sign splits the facts about in half (0.504), and the codes keep
0.988 to 0.999 of an exact scan's nearest for users of 100,000 to 20,000 facts
(`bench.sign_codes`).

The mean is the user's own, per width, in `code_centres`: behind the same policies as the facts
it comes from, erased with them, and only for users the codes rank at all. When a user's unended
facts of a width first exceed `fact_sql.EXACT_UP_TO`, the write that took them past it records
their mean (of the unit vectors, `embedding_half`) and codes every fact of the user of that
width again (`fact_sql.CENTRE_CODES`), under the user's write lock; from then on each write codes
its fact less that centre. If their plain codes already split their facts (`CENTRED_BELOW`), the
centre recorded is NULL and nothing is rewritten. Any other user's codes are the plain signs, as
before. A rewritten row's page is not all-visible until a vacuum, so until autovacuum visits
`facts` that user's index-only scans read the heap for those rows; the migration vacuums.

`embedding_bits` stops being a generated column (its expression cannot read another table): the
write statements compute it, and a row trigger codes a fact that arrives without one (SQL of
one's own, a change of embedding), so every write path still fills it. A fact is coded with the
centre its transaction sees; the writes of the engine take the user's write lock first, so none
of them can miss a centre being recorded.
"""

from __future__ import annotations

from recollect.store.schema.covering_reads import COVERED, UNENDED
from recollect.store.schema.half_vectors import HALVED
from recollect.store.schema.long_term import COVERED_MAX_DIM
from recollect.store.schema.org_admin import ORG_ADMIN_WRITER, SHARED_ROWS

CENTRED_FROM = 20_000
"""Unended facts of one width past which a user's codes are centred: `fact_sql.EXACT_UP_TO`,
where the codes start to rank (a test holds the two equal)."""
CENTRED_BELOW = 0.4
"""The share of their signs in which a user's plain codes differ, one from the next, below which
they are centred: `fact_sql.CODES_SPREAD`, below which the codes are not read (a test holds the
two equal). Codes that split the facts already (random directions, 0.5; all-MiniLM-L6-v2's,
0.46) stay as they are: centring them keeps no more of the nearest and rewrites every row."""
SPREAD_SAMPLED = 2000
"""Codes whose neighbours in index order are compared to measure the plain codes' spread."""


def code(vector: str, centre: str) -> str:
    """The code of the SQL `vector`: the signs of its unit vector less `centre` (a vector of its
    width), or its own signs where `centre` is NULL, padded to `COVERED_MAX_DIM` bits."""
    return (
        f"(CASE WHEN {centre} IS NULL THEN binary_quantize({vector})"
        f" ELSE binary_quantize(l2_normalize({vector}) - {centre}) END)"
        f"::varbit::bit({COVERED_MAX_DIM})"
    )


def plain_spread(codes: str, width: str) -> str:
    """The mean share of signs in which each of the SQL `codes` (a query of `embedding_bits`,
    in index order) differs from the one before it."""
    return (
        f"(SELECT avg(d) FROM (SELECT (embedding_bits <~> lag(embedding_bits) OVER ())::float8"
        f" / {width} AS d FROM (SELECT embedding_bits FROM ({codes}) AS codes"
        f" LIMIT {SPREAD_SAMPLED}) AS sampled) AS pairs)"
    )


def centre_of(org_id: str, user_id: str, width: str) -> str:
    """The centre recorded for the user and the SQL `width`, or NULL (none, or a NULL centre:
    their plain codes split their facts already)."""
    return (
        f"(SELECT centre FROM code_centres WHERE org_id = {org_id} AND user_id = {user_id}"
        f" AND embedding_dim = {width})"
    )


_LARGE_USERS_SPREAD = plain_spread(
    "SELECT embedding_bits FROM facts AS f WHERE f.org_id = large.org_id"
    f" AND f.user_id = large.user_id AND f.embedding_dim = large.embedding_dim AND {UNENDED}",
    "large.embedding_dim",
)
CODE_FACT_SIGNATURE = "recollect_code_fact()"
_NEW_CODE = code(
    "NEW.embedding", centre_of("NEW.org_id", "NEW.user_id", "vector_dims(NEW.embedding)")
)

CENTRED_CODES_SQL = f"""
CREATE TABLE code_centres (
    org_id text NOT NULL,
    user_id text NOT NULL,
    embedding_dim smallint NOT NULL,
    centre vector,
    facts integer NOT NULL,
    centred_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, user_id, embedding_dim)
);
INSERT INTO code_centres (org_id, user_id, embedding_dim, centre, facts)
SELECT org_id, user_id, embedding_dim,
       CASE WHEN {_LARGE_USERS_SPREAD} < {CENTRED_BELOW} THEN centre END, n
FROM (SELECT org_id, user_id, embedding_dim, avg(embedding_half)::vector AS centre, count(*) AS n
      FROM facts WHERE {UNENDED} AND {COVERED} AND {HALVED}
      GROUP BY org_id, user_id, embedding_dim HAVING count(*) > {CENTRED_FROM}) AS large;

ALTER TABLE facts ALTER COLUMN embedding_bits DROP EXPRESSION;
UPDATE facts AS f SET embedding_bits = {code("f.embedding", "c.centre")}
FROM code_centres AS c
WHERE f.org_id = c.org_id AND f.user_id = c.user_id AND f.embedding_dim = c.embedding_dim
  AND c.centre IS NOT NULL;

SELECT recollect_protect('code_centres');
CREATE POLICY org_shared_reads ON code_centres FOR SELECT USING ({SHARED_ROWS});
CREATE POLICY org_shared_inserts ON code_centres FOR INSERT WITH CHECK ({ORG_ADMIN_WRITER});

CREATE FUNCTION {CODE_FACT_SIGNATURE} RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.embedding_bits := CASE WHEN NEW.embedding IS NOT NULL THEN {_NEW_CODE} END;
    RETURN NEW;
END
$$;
REVOKE ALL ON FUNCTION {CODE_FACT_SIGNATURE} FROM PUBLIC;
CREATE TRIGGER facts_code_when_missing BEFORE INSERT ON facts
    FOR EACH ROW WHEN (NEW.embedding_bits IS NULL AND NEW.embedding IS NOT NULL)
    EXECUTE FUNCTION {CODE_FACT_SIGNATURE};
CREATE TRIGGER facts_code_when_embedded BEFORE UPDATE OF embedding ON facts
    FOR EACH ROW EXECUTE FUNCTION {CODE_FACT_SIGNATURE};
"""
"""Users already past `CENTRED_FROM` are centred by the migration itself, seeing every row (a NULL
centre where their plain codes split their facts already). The
engine's writes compute the code themselves, so the insert trigger's `WHEN` is false for them
and its function never runs (a row trigger's function cost imports about 15%)."""
CENTRES_RECORDED = "SELECT EXISTS (SELECT 1 FROM code_centres WHERE centre IS NOT NULL)"
"""Whether the migration coded any user's facts again (`migrations.Migration.rewrote`)."""
