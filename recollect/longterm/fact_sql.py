"""Every statement on long-term memory, as named constants.

Scope predicates come in two shapes: a write lands exactly in its scope (the user's durable
memory, or one session's), while a read in a session also sees the user's durable memory.
"""

from __future__ import annotations

import hashlib
import math

from recollect.store.schema.centred_codes import (
    CENTRED_BELOW,
    CENTRED_FROM,
    SPREAD_SAMPLED,
    centre_of,
    code,
    plain_spread,
)
from recollect.store.schema.covering_reads import (
    CODED,
    COVERED,
    SAME_WIDTH,
    UNENDED,
    WORDED,
)
from recollect.store.schema.half_vectors import HALVED, QUERY_HALF
from recollect.store.schema.long_term import COVERED_MAX_DIM
from recollect.store.schema.plan_days import PLAN_DAY
from recollect.store.scope import ScopeKind


def tenant_lexeme(org_id: str, user_id: str) -> str:
    """The tsquery literal of the tenant's lexeme; must match the `search` column's expression."""
    digest = hashlib.md5(f"{org_id}\x1f{user_id}".encode(), usedforsecurity=False).hexdigest()
    return f"'~{digest}'"


_WRITE_SCOPE = {
    ScopeKind.USER: "org_id = %(org_id)s AND user_id = %(user_id)s AND session_id IS NULL",
    ScopeKind.SESSION: (
        "org_id = %(org_id)s AND user_id = %(user_id)s AND session_id = %(session_id)s"
    ),
}
_WRITE_SCOPE[ScopeKind.ORG] = _WRITE_SCOPE[ScopeKind.USER]
"""Organisation-shared facts are stored under `ORG_OWNER` as their user (`Scope.owner_id`)."""
_READ_SCOPE = {
    ScopeKind.USER: _WRITE_SCOPE[ScopeKind.USER],
    ScopeKind.ORG: _WRITE_SCOPE[ScopeKind.ORG],
    ScopeKind.SESSION: (
        "org_id = %(org_id)s AND user_id = %(user_id)s"
        " AND (session_id IS NULL OR session_id = %(session_id)s)"
    ),
}
_HELD = "(valid_to IS NULL OR (metadata ? 'replaced_by_plan' AND valid_to > %(now)s))"
"""Not ended, or ended only on the day of a plan still to come (every other end is the
moment a successor or a retraction was learned, which has passed).

Every test of whether a fact holds compares with `%(now)s`, the application's clock
(`recollect.store.clock.now()` unless the caller names a moment), never the database's
`now()`: a moved clock then moves recall, the profile, listings and the write path alike."""
NOT_ENDED = "superseded_by IS NULL AND deleted_at IS NULL AND " + _HELD
"""Not replaced, not deleted, not ended yet: what holds now, and the plans still to start."""
LIVE = (
    "superseded_by IS NULL AND deleted_at IS NULL"
    " AND (valid_from <= learned_at OR valid_from <= %(now)s) AND " + _HELD
)
"""True now: not replaced, not deleted, begun (a plan starts on its day; any other fact when it
was learned, whatever the clocks say) and not ended (a fact whose successor was purged keeps
its `valid_to` and stays history; a fact a plan replaces holds until the plan's day)."""
LIVE_OR_PLANNED = NOT_ENDED
"""What recall reads: `LIVE`, and the plans still to start, which the prompt shows with the
day they start (a plan is worth knowing before it happens)."""
AS_OF = (
    "deleted_at IS NULL AND learned_at <= %(as_of)s AND valid_from <= %(as_of)s"
    " AND (valid_to IS NULL OR valid_to > %(as_of)s)"
    " AND (superseded_by IS NULL OR valid_to IS NOT NULL)"
)
"""True at `as_of`: learned by then, begun by then and not yet replaced; a merged duplicate
(superseded without an end) is never shown twice."""

FACT_COLUMNS = (
    "id::text AS id, org_id, user_id, session_id, category, subject, text, confidence, "
    "source_ids, learned_at, last_reinforced_at, superseded_by::text AS superseded_by, "
    "deleted_at, valid_from, valid_to, metadata"
)

OR_QUERY = """(
    SELECT coalesce(string_agg(quote_literal(lexeme), ' | '), '')::tsquery
    FROM unnest(tsvector_to_array(to_tsvector('english', %(query)s))) AS lexeme
)"""
"""Any of the query's own lexemes (stemmed, stop words dropped, each once) may match: a question
rarely shares all its words with one fact, and recall wants candidates that the ranking then
orders. Built from the tsvector and read as quoted lexemes, not parsed again, so a hyphenated
word or a URL stays the one lexeme the facts' `search` holds (parsing `x.org/a?b=c` again made
it the phrase `'/a' <-> 'b' <-> 'c'`), as `fact_words` lists it."""
TENANT_MATCH = "numnode(q) > 0 AND search @@ (q && %(tenant_lexeme)s::tsquery)"
"""The words and the tenant's lexeme (see `fact_schema`), tested row by row where no covering
index holds the rows: history and episodes."""

LOCK_USER = (
    "SELECT pg_advisory_xact_lock(hashtextextended(%(org_id)s || chr(31) || %(user_id)s, 0))"
)
"""Writes for one user are serialised, so two concurrent duplicates cannot both insert."""


def _by_kind(template: str, scopes: dict[ScopeKind, str]) -> dict[ScopeKind, str]:
    return {kind: template.format(scope=clause) for kind, clause in scopes.items()}


EXACT_UP_TO = 20_000
"""A user with at most this many unended facts is ranked on every vector (at half precision;
the rows read for the best give their exact similarities); above it, by Hamming distance of
binary codes first (`schema.covering_reads`). Measured in `bench.recall_latency`: ranking
10,000 vectors costs about 5 ms, exact scores of 100,000 about 60; the codes keep the top 40
of an exact scan (overlap 0.999) at 100,000 facts but only 0.86 at 10,000, 0.77 at 25,000 and
0.83 at 50,000, where past its few true neighbours a query's order rests on near-orthogonal
vectors (the benchmark's corpus: near copies of 2,048 random directions). A sentence
embedder's plain codes rank worse still; a large user's are taken less their own mean
(`schema.centred_codes`, from `CENTRED_FROM`, the same count), and codes that still cannot tell
the facts apart leave the scope ranked exactly (`CODES_SPREAD`)."""
_QUERY_CENTRE = centre_of("%(org_id)s", "%(user_id)s", "%(dim)s::smallint")
QUERY_BITS = f"(SELECT {code('%(vector)s::vector', _QUERY_CENTRE)})"
"""The query's code, as the scope's facts are coded (less the user's centre, if any). A scalar
subquery, so it is made once per read: on a generic plan the bare expression was made again for
every row it was compared with, about 0.45 us each: 46 of the 87 ms the dense read of a
100,000-fact user took."""
RESCORED = 1000
"""Facts the Hamming prefilter hands to exact scoring."""
_COUNTED = f"""
counted AS MATERIALIZED (
    SELECT count(*) AS n FROM (
        SELECT 1 FROM facts WHERE {{scope}} AND {UNENDED} AND {COVERED} AND {CODED}
          AND {SAME_WIDTH}
        LIMIT {EXACT_UP_TO + 1}
    ) AS capped
)"""
"""How many unended facts of the query's width the scope holds, counted up to the cap."""

_EXACT = f"""
(SELECT id, 1 - (embedding_half <=> {QUERY_HALF}) AS similarity
 FROM facts
 WHERE {{scope}} AND {UNENDED} AND {COVERED} AND {HALVED} AND {SAME_WIDTH} {{part}} {{gate}}
 ORDER BY similarity DESC
 LIMIT %(dense_limit)s)"""
"""Every unended vector of the scope ranked at half precision from `facts_live_halves` alone.
Its distances differ from the exact ones by about 1e-4, so only a near tie at the last place
can differ from an exact scan's; the statements that read the winners' rows score those
exactly (`EXACT_SIMILARITY`), so the order and the similarities recall ranks by are exact."""

CODES_SAMPLED = 2000
"""Codes read first, in index order, to set the Hamming distance the scan keeps."""
CODES_MARGIN = 2
"""The sample's cut keeps about this many times `RESCORED` codes, so a sample whose facts lie
nearer the query or farther than the scope's still leaves `RESCORED` to rank."""
CODES_SPREAD = 0.4
"""The share of its signs in which a query's code must differ, on average, from the sampled codes
for the codes to rank the scope; below it the scope is ranked exactly, as a small one is.

A code is the signs of a vector's components, and a sentence embedder's vectors lie in one
narrow cone. With the offline embedder (multilingual-e5-small) LoCoMo's questions differ from
its 5,077 turns, observations and summaries in 0.138 of their signs, and the nearest codes kept
0.56 to 0.68 of an exact scan's nearest for users of 100,000 to 20,000 facts (`bench.sign_codes`;
loaded as one user, the coded read kept 0.813 of the top 40). In a sweep scoring 1 to 5% of
them (the top 2 to 40), they kept 0.49 to 0.56; less half their mean they differ in 0.328 and
keep 0.91 to 0.95; less 0.7 of it, 0.433 and 0.96 to 0.98; less all of it, 0.504 and 0.95 to
0.98. all-MiniLM-L6-v2's vectors, not used to set the bound, differ in 0.461, and their codes
keep 0.996 to 1.0. Random directions (the benchmark's corpus) differ in half. A large user's
codes are taken less the user's mean (`schema.centred_codes`), which splits every component
that varies; the bound still holds for vectors that vary in few components."""

_CODES = f"{{scope}} AND {UNENDED} AND {COVERED} AND {CODED} AND {SAME_WIDTH} {{part}} {{gate}}"
_CODED_CUT = f"""
sampled AS MATERIALIZED (
    SELECT embedding_bits <~> {QUERY_BITS} AS distance FROM facts WHERE {_CODES}
    LIMIT {CODES_SAMPLED}
),
cut AS MATERIALIZED (
    SELECT percentile_disc(
               least(1.0, {CODES_MARGIN} * {{rescored}} / greatest({{size}}, 1)::float8)
           ) WITHIN GROUP (ORDER BY distance) AS distance,
           coalesce(avg(distance), 0) >= {CODES_SPREAD} * %(dim)s::float8 AS informative
    FROM sampled
),
close AS MATERIALIZED (
    SELECT id, embedding_bits <~> {QUERY_BITS} AS distance FROM facts
    WHERE {_CODES} {{informative}}
      AND (embedding_bits <~> {QUERY_BITS}) <= (SELECT distance FROM cut)
)"""
"""The codes within the distance that a sample of the scope says about `CODES_MARGIN` times
`RESCORED` of them lie: ranking a few thousand codes instead of every one saved 6 ms of a
100,000-fact user's read (a bounded sort still copies every row it is handed). The same sample
tells whether the codes can rank the scope at all (`CODES_SPREAD`)."""

_CODED = f"""
(SELECT f.id, 1 - (f.embedding <=> %(vector)s::vector) AS similarity
 FROM ((SELECT id FROM close WHERE (SELECT count(*) FROM close) >= {{rescored}}
        ORDER BY distance LIMIT {{rescored}})
       UNION ALL
       (SELECT id FROM facts WHERE {_CODES} AND (SELECT count(*) FROM close) < {{rescored}}
        ORDER BY embedding_bits <~> {QUERY_BITS} LIMIT {{rescored}})) AS near
 JOIN facts AS f USING (id)
 ORDER BY similarity DESC
 LIMIT %(dense_limit)s)"""
"""The `RESCORED` nearest binary codes from `facts_live_bits`, then their vectors scored: the
nearest of `close`, or, when fewer than `RESCORED` are that close, of every code."""

EXACT_SIMILARITY = "1 - (facts.embedding <=> %(vector)s::vector)"
"""A fact's similarity at full precision, from its row: `_nearest` may rank at half precision.
"""

_ENDING = f"""
(SELECT id, 1 - (embedding <=> %(vector)s::vector) AS similarity
 FROM facts
 WHERE {{scope}} AND superseded_by IS NULL AND deleted_at IS NULL AND valid_to IS NOT NULL
   AND metadata ? 'replaced_by_plan' AND valid_to > %(now)s
   AND embedding IS NOT NULL AND {SAME_WIDTH} {{part}}
 ORDER BY similarity DESC
 LIMIT %(dense_limit)s)"""
"""Facts live until a plan's day, from the heap (`facts_ending` holds only them)."""


LOWER_SHARE = 0.6
"""The share of a split scope's facts below the split (`DENSE_CODED_PARTS`). The lower range
is read on the connection that reads nothing else of weight, the upper one beside the lexical
read, which took 4.3 ms against the whole dense read's 18 to 22 at 100,000 facts, so the two
connections finish about together."""


def _part_rescored(share: float) -> int:
    """Codes a range holding `share` of the scope hands to exact scoring: its expected part of
    the scope's `RESCORED` nearest, and three standard deviations more, so it keeps nearly
    all of them."""
    expected = RESCORED * share
    return math.ceil(expected + 3 * math.sqrt(expected * (1 - share)))


_LOWER = "AND id < %(split_id)s::uuid"
_UPPER = "AND id >= %(split_id)s::uuid"
_RESCORED_IN = {
    "": RESCORED,
    _LOWER: _part_rescored(LOWER_SHARE),
    _UPPER: _part_rescored(1 - LOWER_SHARE),
}


def _nearest(scope: str, *, counted: bool, coded: bool, part: str = "") -> str:
    """`LIVE_OR_PLANNED`'s nearest facts in two disjoint parts: the unended facts, nearly all,
    from a covering index alone, and the facts a plan ends later from the heap. The unended
    part is the exact read or, past `EXACT_UP_TO` facts and when the sample of codes shows
    they can rank the scope (`CODES_SPREAD`), the codes' read; one-time filters run one of
    them. The statement that counts the scope returns the count as `scope_facts`; a statement
    that does not count is told the scope's size as `%(scope_size)s` when it reads the codes.
    A scope within `EXACT_UP_TO` never reads the codes' sample: the sample's own scans are
    gated on the count, and the exact part's `OR` stops at its first arm. `part` keeps one
    range of ids (`_LOWER`, `_UPPER`), whose codes are cut and scored on their own."""
    large = f"(SELECT n FROM counted) > {EXACT_UP_TO}" if counted else "true"
    informative = "(SELECT informative FROM cut)"
    if coded:
        exact_gate = f"AND (NOT {large} OR NOT {informative})"
        coded_gate = f"AND {large} AND {informative}"
    else:
        exact_gate = coded_gate = ""
    rescored = _RESCORED_IN[part]
    parts = [_EXACT.format(scope=scope, part=part, gate=exact_gate)]
    if coded:
        parts.append(_CODED.format(scope=scope, part=part, gate=coded_gate, rescored=rescored))
    parts.append(_ENDING.format(scope=scope, part=part))
    size = "(SELECT n FROM counted)" if counted else "NULL::bigint"
    ctes = [_COUNTED.format(scope=scope)] if counted else []
    if coded:
        known = "(SELECT n FROM counted)" if counted else "%(scope_size)s"
        sample_gate = f"AND {large}" if counted else ""
        cut = _CODED_CUT.format(
            scope=scope,
            part=part,
            gate=sample_gate,
            size=known,
            informative=coded_gate,
            rescored=rescored,
        )
        ctes.append(cut)
    return f"""
WITH {"".join(cte + "," for cte in ctes)} ranked AS ({" UNION ALL ".join(parts)}
)
SELECT id, similarity, {size} AS scope_facts FROM ranked
ORDER BY similarity DESC LIMIT %(dense_limit)s
"""


_WRITE_SIMILARITY = (
    "CASE WHEN vector_dims(embedding) = %(dim)s THEN 1 - (embedding <=> %(vector)s::vector) END"
)

_SAME_TEXT = f"""
SELECT id FROM (
    (SELECT id, search FROM facts
     WHERE {{scope}} AND {UNENDED} AND {WORDED})
    UNION ALL
    (SELECT id, search FROM facts
     WHERE {{scope}} AND superseded_by IS NULL AND deleted_at IS NULL AND valid_to IS NOT NULL)
) AS worded
WHERE search = (SELECT to_tsvector('english', %(text)s) || %(tenant_lexeme)s::tsvector)
"""
"""Facts whose words are the text's: a text equal but for case has the same `search`, compared
in `facts_live_words` (and for the few facts with an end set, in the heap) instead of reading
every row's text; the caller compares the texts themselves. The text's own tsvector is a scalar
subquery, made once: a generic plan would make it again for every row."""

SAME_SUBJECT_OR_TEXT = _by_kind(
    f"""
SELECT row.* FROM (
    SELECT id FROM facts
    WHERE {{scope}} AND subject IS NOT NULL AND subject = %(subject)s
      AND superseded_by IS NULL AND deleted_at IS NULL
    UNION
    SELECT id FROM facts WHERE {{scope}} AND id = ANY(%(replaces)s::uuid[])
    UNION
    {_SAME_TEXT}
) AS same, LATERAL (
    SELECT {FACT_COLUMNS}, {_WRITE_SIMILARITY} AS similarity
    FROM facts
    WHERE facts.id = same.id AND {LIVE}
      AND ((subject IS NOT NULL AND subject = %(subject)s) OR lower(text) = lower(%(text)s)
           OR id = ANY(%(replaces)s::uuid[]))
    OFFSET 0
) AS row
ORDER BY row.learned_at DESC
LIMIT 20
""",
    _WRITE_SCOPE,
)
"""Each of the three ways a fact can be the same one reads its own index (`facts_live_scope`
by subject, the key by id, `facts_live_words` by words), and only the rows they name are read
from the table, one by key (`OFFSET 0` keeps the lookup a subquery of its own, which no plan can
trade for a scan of the scope's rows). A scan of every live row of the user cost 513 ms at
100,000 facts."""

WRITE_SLACK = 4
"""The nearest unended facts are read `WRITE_SLACK` times over, then those not begun yet (a
plan whose day is ahead) are dropped: the write path's neighbours are facts that hold now."""

NEAREST_DENSE = {
    kind: f"""
WITH nearest AS ({_nearest(clause, counted=True, coded=True)})
SELECT {FACT_COLUMNS}, {EXACT_SIMILARITY} AS similarity, nearest.scope_facts
FROM nearest JOIN facts USING (id)
WHERE {LIVE}
ORDER BY similarity DESC
LIMIT %(limit)s
"""
    for kind, clause in _WRITE_SCOPE.items()
}
"""The facts nearest in meaning, from the covering indexes as recall reads them
(`_nearest`), then the heap rows of those few; each row carries the scope's size, counted up to
`EXACT_UP_TO` + 1 (`CENTRE_CODES` runs past it)."""
NEAREST_DENSE_WIDE = _by_kind(
    f"""
SELECT {FACT_COLUMNS}, 1 - (embedding <=> %(vector)s::vector) AS similarity
FROM facts
WHERE {{scope}} AND {LIVE}
  AND embedding IS NOT NULL AND vector_dims(embedding) = %(dim)s
ORDER BY similarity DESC
LIMIT %(limit)s
""",
    _WRITE_SCOPE,
)
"""`NEAREST_DENSE` for embeddings too wide for the covering indexes: every live row's."""

NEAREST_LEXICAL = {
    kind: f"""
WITH hits AS (
    SELECT id, ts_rank_cd(search, q) AS rank
    FROM (
        (SELECT id, search FROM facts
         WHERE {clause} AND {UNENDED} AND {WORDED})
        UNION ALL
        (SELECT id, search FROM facts
         WHERE {clause} AND superseded_by IS NULL AND deleted_at IS NULL
           AND valid_to IS NOT NULL)
    ) AS worded, (SELECT {OR_QUERY} AS q) AS terms
    WHERE numnode(q) > 0 AND search @@ q
    ORDER BY rank DESC, id
    LIMIT %(dense_limit)s
)
SELECT {FACT_COLUMNS}, NULL::float8 AS similarity
FROM hits JOIN facts USING (id)
WHERE {LIVE}
ORDER BY hits.rank DESC, id
LIMIT %(limit)s
"""
    for kind, clause in _WRITE_SCOPE.items()
}
"""The facts sharing most of the text's words, tested in `facts_live_words` (and for the
few facts with an end set, in the heap), then the heap rows of those few."""

_GIVEN_CODE = code("given.v", centre_of("%(org_id)s", "%(user_id)s", "vector_dims(given.v)"))
INSERT_FACT = f"""
INSERT INTO facts (org_id, user_id, session_id, category, subject, text, confidence, source_ids,
                   learned_at, last_reinforced_at, superseded_by, superseded_at, valid_from,
                   valid_to, embedding, embedding_bits, metadata)
SELECT %(org_id)s, %(user_id)s, %(session_id)s, %(category)s, %(subject)s, %(text)s,
       %(confidence)s, %(source_ids)s, %(learned_at)s, %(learned_at)s,
       %(superseded_by)s::uuid, CASE WHEN %(superseded_by)s::uuid IS NULL THEN NULL ELSE now() END,
       %(valid_from)s::timestamptz, %(valid_to)s, given.v, {_GIVEN_CODE}, %(metadata)s
FROM (SELECT %(vector)s::vector AS v) AS given
RETURNING {FACT_COLUMNS}
"""
"""A fact and its code (`schema.centred_codes`)."""

SUPERSEDE = _by_kind(
    """
UPDATE facts SET superseded_by = %(new_id)s::uuid, superseded_at = now(), valid_to = %(valid_to)s
WHERE {scope} AND id = ANY(%(ids)s::uuid[]) AND superseded_by IS NULL
""",
    _WRITE_SCOPE,
)

END_WHEN_PLAN_STARTS = _by_kind(
    """
UPDATE facts SET valid_to = %(valid_to)s,
                 metadata = metadata || jsonb_build_object('replaced_by_plan', %(new_id)s::text)
WHERE {scope} AND id = ANY(%(ids)s::uuid[]) AND superseded_by IS NULL
  AND (valid_to IS NULL OR valid_to > %(valid_to)s)
""",
    _WRITE_SCOPE,
)
"""A plan replaces these facts on its day: each holds until then, and nothing needs to run
when the day comes (`LIVE` and `AS_OF` read `valid_from` and `valid_to`)."""

REINFORCE = _by_kind(
    f"""
UPDATE facts
SET confidence = least(1.0, confidence + (1 - confidence) * %(gain)s),
    last_reinforced_at = greatest(last_reinforced_at, %(at)s),
    reinforcement_count = reinforcement_count + 1,
    source_ids = ARRAY(SELECT DISTINCT s FROM unnest(source_ids || %(source_ids)s::text[]) s
                       ORDER BY s)
WHERE {{scope}} AND id = %(id)s::uuid
RETURNING {FACT_COLUMNS}
""",
    _WRITE_SCOPE,
)

FORGET = _by_kind(
    f"UPDATE facts SET deleted_at = now() WHERE {{scope}} AND id = %(id)s::uuid AND {NOT_ENDED}",
    _WRITE_SCOPE,
)

LIST_FACTS = _by_kind(
    f"""
SELECT {FACT_COLUMNS} FROM facts
WHERE {{scope}} AND deleted_at IS NULL
  AND (%(include_superseded)s OR ({NOT_ENDED}))
ORDER BY learned_at, id
""",
    _READ_SCOPE,
)

LIST_FACTS_AS_OF = _by_kind(
    f"""
SELECT {FACT_COLUMNS} FROM facts
WHERE {{scope}} AND {AS_OF}
ORDER BY learned_at, id
""",
    _READ_SCOPE,
)
"""The facts true at `as_of`, oldest first: what the profile was built from then."""

PLAN_DAYS = _by_kind(
    f"""
SELECT {FACT_COLUMNS} FROM facts
WHERE {{scope}} AND {PLAN_DAY} AND deleted_at IS NULL AND valid_from <= %(now)s
  AND ((metadata ? 'replaced_by_plan' AND valid_to <= %(now)s)
       OR (valid_from > learned_at AND superseded_by IS NULL
           AND (valid_to IS NULL OR valid_to > %(now)s)))
ORDER BY valid_from, learned_at, id
""",
    _READ_SCOPE,
)
"""What the plans whose day has come changed by `%(now)s`: the plans now holding, and the
facts they ended (`recollect.longterm.profile.profile_now` applies both to the document)."""

WITH_SUBJECT = _by_kind(
    f"""
SELECT {FACT_COLUMNS} FROM facts
WHERE {{scope}} AND {LIVE} AND subject IS NOT NULL
ORDER BY last_reinforced_at DESC, id
LIMIT %(limit)s
""",
    _READ_SCOPE,
)

_INGEST_COLUMNS = """org_id, user_id, session_id, category, subject, text, confidence, source_ids,
            learned_at, last_reinforced_at, embedding, metadata"""
CREATE_INGEST_STAGING = """
CREATE TEMP TABLE IF NOT EXISTS facts_ingest (LIKE facts INCLUDING DEFAULTS) ON COMMIT DELETE ROWS
"""
"""Row-level security forbids `COPY FROM` into `facts`; a session-private temp table takes the
binary COPY and one `INSERT ... SELECT` moves the rows, each checked by the policy."""
COPY_FACTS = f"""
COPY facts_ingest ({_INGEST_COLUMNS})
FROM STDIN (FORMAT BINARY)
"""
MOVE_INGESTED_FACTS = f"""
INSERT INTO facts ({_INGEST_COLUMNS}, valid_from, embedding_bits)
SELECT {_INGEST_COLUMNS}, learned_at,
       {code("embedding", centre_of("%(org_id)s", "%(user_id)s", "%(dim)s::smallint"))}
FROM facts_ingest
"""
"""An imported fact starts when it was learned, and is coded (`schema.centred_codes`), both
written here so that no trigger runs for it (`schema.valid_from_when_missing`). An import
lands in one user's scope, the one named."""
_STAGED = "FROM facts_ingest WHERE embedding IS NOT NULL AND vector_dims(embedding) = %(dim)s"


def _centre_codes(*, staged: bool) -> str:
    """Once the user's unended facts of the width pass `CENTRED_FROM` (with `staged`, counting
    the rows an import is about to move as well), their mean (of the unit vectors) is recorded
    and every fact of the user of that width is coded less it (`schema.centred_codes`); unless
    their plain codes split them already (`CENTRED_BELOW`), and then a NULL centre is recorded
    and no fact is coded again."""
    staged_count = f" + (SELECT count(*) {_STAGED})" if staged else ""
    staged_vectors = f" UNION ALL SELECT l2_normalize(embedding) {_STAGED}" if staged else ""
    staged_codes = (
        f" UNION ALL (SELECT binary_quantize(embedding)::varbit::bit({COVERED_MAX_DIM}) {_STAGED}"
        f" AND (SELECT n FROM counted) > {CENTRED_FROM})"
        if staged
        else ""
    )
    stored_codes = f"""(SELECT embedding_bits FROM facts
        WHERE org_id = %(org_id)s AND user_id = %(user_id)s AND {UNENDED} AND {COVERED}
          AND {CODED} AND {SAME_WIDTH} AND (SELECT n FROM counted) > {CENTRED_FROM}
        LIMIT {SPREAD_SAMPLED})"""
    spread = plain_spread(stored_codes + staged_codes, "%(dim)s::float8")
    return f"""
WITH missing AS MATERIALIZED (
    SELECT NOT EXISTS (SELECT 1 FROM code_centres WHERE org_id = %(org_id)s
                       AND user_id = %(user_id)s AND embedding_dim = %(dim)s::smallint) AS yes
),
counted AS MATERIALIZED (
    SELECT count(*){staged_count} AS n FROM (
        SELECT 1 FROM facts
        WHERE org_id = %(org_id)s AND user_id = %(user_id)s AND {UNENDED} AND {COVERED}
          AND {CODED} AND {SAME_WIDTH} AND (SELECT yes FROM missing)
        LIMIT {CENTRED_FROM + 1}
    ) AS capped
),
plain AS MATERIALIZED (
    SELECT {spread} AS spread
),
centre AS (
    INSERT INTO code_centres (org_id, user_id, embedding_dim, centre, facts)
    SELECT %(org_id)s, %(user_id)s, %(dim)s,
           CASE WHEN (SELECT spread FROM plain) < {CENTRED_BELOW} THEN avg(unit) END, count(*)
    FROM (SELECT embedding_half::vector AS unit FROM facts
          WHERE org_id = %(org_id)s AND user_id = %(user_id)s AND {UNENDED} AND {COVERED}
            AND {HALVED} AND {SAME_WIDTH}{staged_vectors}) AS units
    WHERE (SELECT yes FROM missing) AND (SELECT n FROM counted) > {CENTRED_FROM}
    HAVING count(*) > 0
    ON CONFLICT DO NOTHING
    RETURNING centre
)
UPDATE facts SET embedding_bits = {code("embedding", "(SELECT centre FROM centre)")}
WHERE org_id = %(org_id)s AND user_id = %(user_id)s AND embedding IS NOT NULL
  AND embedding_dim = %(dim)s::smallint
  AND EXISTS (SELECT 1 FROM centre WHERE centre IS NOT NULL)
"""


CENTRE_CODES = _centre_codes(staged=False)
"""Run under the user's write lock after a write that may have taken them past `CENTRED_FROM`;
for a user already centred, one key lookup."""
CENTRE_CODES_BEFORE_IMPORT = _centre_codes(staged=True)
"""Run under the user's write lock before an import moves its rows: an import that takes the
user past `CENTRED_FROM` records the centre first, so its own rows are coded as they move and
only the facts already stored are coded again."""
COPY_FACT_TYPES = (
    "text", "text", "text", "text", "text", "text", "float4", "text[]",
    "timestamptz", "timestamptz", "vector", "jsonb",
)  # fmt: skip

# --- the read path -------------------------------------------------------------------------


CANDIDATE_COLUMNS = FACT_COLUMNS.replace("metadata", "metadata::text AS metadata")
"""A candidate's columns, `metadata` as its JSON text: a recall reads about a hundred
candidates and shows a handful, so only the shown ones pay to parse it (`shown_row`)."""

_EPISODE_AS_FACT = (
    "id::text AS id, org_id, user_id, session_id, 'event' AS category, NULL::text AS subject, "
    "summary AS text, 1.0::real AS confidence, source_ids, occurred_at AS learned_at, "
    "occurred_at AS last_reinforced_at, NULL::text AS superseded_by, deleted_at, "
    "occurred_at AS valid_from, NULL::timestamptz AS valid_to, metadata::text AS metadata"
)
"""Episodes rank like events that are as certain as the record of them."""

_FACT_SCAN = """
SELECT id, 1 - (embedding <=> %(vector)s::vector) AS similarity, NULL::bigint AS scope_facts
FROM facts
WHERE {scope} AND {live} AND embedding IS NOT NULL AND vector_dims(embedding) = %(dim)s
ORDER BY similarity DESC
LIMIT %(dense_limit)s
"""
"""Every vector of the scope from the heap: embeddings too wide for the indexes, and history."""

_DENSE = f"""
(WITH top AS ({{nearest}})
SELECT 'fact' AS kind, {CANDIDATE_COLUMNS}, {EXACT_SIMILARITY} AS similarity, top.scope_facts
FROM top JOIN facts USING (id))
{{episodes}}
"""
"""Facts are ranked on (id, embedding) only, then the winners' rows fetched: projecting every
column of every scanned row cost more than the distances themselves. Episodes ride along in
the same statement (one statement per method: each one costs a round of planning)."""
_EPISODES = f"""
UNION ALL
(SELECT 'episode' AS kind, {_EPISODE_AS_FACT}, 1 - (embedding <=> %(vector)s::vector) AS similarity,
       NULL::bigint AS scope_facts
FROM episodes
WHERE {{scope}} AND deleted_at IS NULL AND embedding IS NOT NULL {{episode_time}}
  AND vector_dims(embedding) = %(dim)s
ORDER BY similarity DESC
LIMIT %(dense_limit)s)"""

_EPISODE_AS_OF = "AND occurred_at <= %(as_of)s"


def _dense(scope: str, nearest: str, episode_time: str = "", *, episodes: bool = True) -> str:
    with_episodes = _EPISODES.format(scope=scope, episode_time=episode_time) if episodes else ""
    return _DENSE.format(nearest=nearest, episodes=with_episodes)


DENSE_COUNTED = {
    kind: _dense(clause, _nearest(clause, counted=True, coded=True))
    for kind, clause in _READ_SCOPE.items()
}
"""Embeddings the covering indexes hold, for a scope whose size this process does not know:
index-only scans, and the count (`scope_facts`) that chooses between them."""
DENSE_EXACT = {
    kind: _dense(clause, _nearest(clause, counted=False, coded=False))
    for kind, clause in _READ_SCOPE.items()
}
"""`DENSE_COUNTED` for a scope known to hold at most `EXACT_UP_TO` facts: no count."""
DENSE_CODED = {
    kind: _dense(clause, _nearest(clause, counted=False, coded=True))
    for kind, clause in _READ_SCOPE.items()
}
"""`DENSE_COUNTED` for a scope known to hold more: the codes' prefilter (or the exact read, when
the codes cannot rank the scope), no count."""


def _coded_part(clause: str, part: str) -> str:
    return _nearest(clause, counted=False, coded=True, part=part)


DENSE_CODED_PARTS = {
    kind: (
        _dense(clause, _coded_part(clause, _LOWER)),
        _dense(clause, _coded_part(clause, _UPPER), episodes=False),
    )
    for kind, clause in _READ_SCOPE.items()
}
"""`DENSE_CODED` in two statements, one on each of two connections: the facts below
`%(split_id)s` (with the episodes) and the rest, each range's codes cut and scored on their
own (`_part_rescored`; `%(scope_size)s` is then the range's size). The two best
`dense_limit` together hold the best of the whole read. Measured beside each other in one
process (200 queries, median / p95 ms): a recall of the 100,000-fact user took 16.8 / 23.9
split and 24.9 / 28.6 whole. The 10,000-fact user's exact read, split the same way, took 5.0 to
5.2 / 7.3 to 7.7 against 5.6 to 5.9 / 6.9 to 7.4 whole in three runs of 300, so an exact read
is not split (`schema.split_scans`)."""
SPLIT_POINT = {
    kind: f"""
WITH counted AS MATERIALIZED (
    SELECT count(*) AS n FROM facts
    WHERE {clause} AND {UNENDED} AND {COVERED} AND {CODED} AND {SAME_WIDTH}
)
SELECT (SELECT n FROM counted) AS scope_facts,
       (SELECT id FROM facts
        WHERE {clause} AND {UNENDED} AND {COVERED} AND {CODED} AND {SAME_WIDTH}
        ORDER BY id OFFSET floor((SELECT n FROM counted) * {LOWER_SHARE})::bigint LIMIT 1
       )::text AS split_id
"""
    for kind, clause in _READ_SCOPE.items()
}
"""The scope's unended facts of the query's width, all counted, and the id with `LOWER_SHARE`
of them below it: read from `facts_live_bits`, whose entries are ordered by id
(`schema.split_scans`), beside a recall's other reads once its size passes `EXACT_UP_TO`."""
DENSE_WIDE = {
    kind: _dense(clause, _FACT_SCAN.format(scope=clause, live=LIVE_OR_PLANNED))
    for kind, clause in _READ_SCOPE.items()
}
"""Embeddings too large for the covering indexes: a scan of the user's heap rows."""
DENSE_AS_OF = {
    kind: _dense(clause, _FACT_SCAN.format(scope=clause, live=AS_OF), _EPISODE_AS_OF)
    for kind, clause in _READ_SCOPE.items()
}
"""What was true at `%(as_of)s`: history is not in the covering indexes, so a heap scan."""

LEXICAL_TIES = "learned_at DESC, id"
"""How facts of equal lexical score are ordered (their lexical ranks follow it): newest first.
Before, ties went in whatever order the heap held the rows, which a change of storage reshuffles.
On LoCoMo's tuning conversations oldest first scored 0.632, newest first 0.626 and fewest lexemes
first 0.628, but oldest first put an older fact above the one a question names in
`test_default_recall` (German questions: 6 of 8 first)."""

_WORDS_COLUMNS = "id, ts_rank(search, q) AS lexical_score, learned_at, length(search) AS lexemes"

QUERY_LEXEMES = "(SELECT tsvector_to_array(to_tsvector('english', %(query)s)))::text[]"
"""The question's lexemes as `fact_words` lists them, made once per read."""
WORDS_LISTED = (
    "EXISTS (SELECT 1 FROM worded_scopes WHERE org_id = %(org_id)s AND user_id = %(user_id)s)"
)
"""Whether the user's words are listed in `fact_words` (`schema.fact_words`): a one-time test
that picks the part of `_fact_words` that runs."""

_COVERED_WORDS = f"""
    (SELECT {_WORDS_COLUMNS}
     FROM facts, (SELECT {OR_QUERY} AS q) AS terms
     WHERE {{scope}} AND {UNENDED} AND {WORDED} AND numnode(q) > 0 AND search @@ q {{gate}}
     ORDER BY lexical_score DESC, {LEXICAL_TIES}
     LIMIT %(lexical_limit)s)"""
"""The unended facts' words, tested in the covering index `facts_live_words`."""

_LISTED_WORDS = f"""
    (SELECT {_WORDS_COLUMNS}
     FROM (SELECT {OR_QUERY} AS q) AS terms,
          (SELECT DISTINCT fact_id FROM fact_words
           WHERE org_id = %(org_id)s AND user_id = %(user_id)s
             AND lexeme = ANY ({QUERY_LEXEMES})
             AND {WORDS_LISTED}) AS listed,
          LATERAL (SELECT id, search, learned_at FROM facts
                   WHERE id = listed.fact_id AND {{scope}} AND {UNENDED} OFFSET 0) AS fact
     WHERE numnode(q) > 0 AND search @@ q
     ORDER BY lexical_score DESC, {LEXICAL_TIES}
     LIMIT %(lexical_limit)s)"""
"""The unended facts that share a word with the question, found in `fact_words` and read by
key: a few index lookups instead of a test of every fact (`OFFSET 0` keeps the read by key, which
a generic plan, expecting one row of the user, would trade for a scan of the covering index)."""

_ENDING_WORDS = f"""
    (SELECT {_WORDS_COLUMNS}
     FROM facts, (SELECT {OR_QUERY} AS q) AS terms
     WHERE {{scope}} AND superseded_by IS NULL AND deleted_at IS NULL AND valid_to IS NOT NULL
       AND metadata ? 'replaced_by_plan' AND valid_to > %(now)s AND numnode(q) > 0
       AND search @@ q
     ORDER BY lexical_score DESC, {LEXICAL_TIES}
     LIMIT %(lexical_limit)s)"""
"""The few facts a plan ends later, from the heap (`facts_ending`)."""


def _fact_words(scope: str, *, listed: bool) -> str:
    """`LIVE_OR_PLANNED`'s matches in the same two parts as `_nearest`: the unended facts, and
    the facts a plan ends later. A listed user's unended facts come from `fact_words`, anyone
    else's from the covering index; where both parts are written, a one-time test of
    `WORDS_LISTED` runs one of them."""
    if listed:
        unended = [
            _COVERED_WORDS.format(scope=scope, gate=f"AND NOT {WORDS_LISTED}"),
            _LISTED_WORDS.format(scope=scope),
        ]
    else:
        unended = [_COVERED_WORDS.format(scope=scope, gate="")]
    parts = " UNION ALL ".join([*unended, _ENDING_WORDS.format(scope=scope)])
    return f"""
SELECT id, lexical_score,
       row_number() OVER (ORDER BY lexical_score DESC, {LEXICAL_TIES}) AS place
FROM ({parts}
) AS found
ORDER BY place
LIMIT %(lexical_limit)s
"""


_FACT_WORDS_SCAN = f"""
SELECT id, lexical_score,
       row_number() OVER (ORDER BY lexical_score DESC, {LEXICAL_TIES}) AS place
FROM (
    SELECT {_WORDS_COLUMNS}
    FROM facts, (SELECT {OR_QUERY} AS q) AS terms
    WHERE {{scope}} AND {{live}} AND {TENANT_MATCH}
    ORDER BY lexical_score DESC, {LEXICAL_TIES}
    LIMIT %(lexical_limit)s
) AS found
"""
"""What was true at a past moment: history is in no covering index, so the heap."""

_LEXICAL = f"""
(WITH hits AS ({{matching}})
SELECT 'fact' AS kind, {CANDIDATE_COLUMNS}, hits.lexical_score
FROM hits JOIN facts USING (id)
ORDER BY hits.place)
UNION ALL
(SELECT 'episode' AS kind, {_EPISODE_AS_FACT}, ts_rank(search, q) AS lexical_score
FROM episodes, (SELECT {OR_QUERY} AS q) AS terms
WHERE {{scope}} AND deleted_at IS NULL AND {TENANT_MATCH} {{episode_time}}
ORDER BY lexical_score DESC
LIMIT %(lexical_limit)s)
"""
"""Ranked by `ts_rank`, word frequency only: `ts_rank_cd` also weighs how close the words sit,
which a one-sentence fact hardly tells apart, and cost 1.5 ms more per recall (3 ms at p95),
for 0.2 points of LoCoMo recall@5 on the tuning and the report conversations alike. Like the
dense statement, facts are ranked on (id, words) and only the winners' rows are read.

Behind row-level security `@@` can serve from no index (it is not leakproof, so it may only
run on rows the policies have passed), so the unended facts' words come from a covering index
whose scan is bounded by the scope: about 0.4 us a fact instead of a heap row each."""
LEXICAL = {
    kind: _LEXICAL.format(
        matching=_fact_words(clause, listed=kind is ScopeKind.USER), scope=clause, episode_time=""
    )
    for kind, clause in _READ_SCOPE.items()
}
"""Only a user's own durable memory has its words listed: a session's read also holds the
session's facts, and organisation-shared facts are never listed (`schema.fact_words`)."""
LEXICAL_AS_OF = {
    kind: _LEXICAL.format(
        matching=_FACT_WORDS_SCAN.format(scope=clause, live=AS_OF),
        scope=clause,
        episode_time=_EPISODE_AS_OF,
    )
    for kind, clause in _READ_SCOPE.items()
}

INSERT_EPISODE = """
INSERT INTO episodes (org_id, user_id, session_id, summary, occurred_at, source_ids, embedding,
                      metadata)
VALUES (%(org_id)s, %(user_id)s, %(session_id)s, %(summary)s, %(occurred_at)s, %(source_ids)s,
        %(vector)s::vector, %(metadata)s)
RETURNING id::text AS id
"""

GENERIC_PLANS = "SELECT set_config('plan_cache_mode', 'force_generic_plan', true)"
"""Recall's statements are prepared once per connection and kept on their generic plan for the
transaction: planning them cost ~0.45 ms of a ~2 ms recall, and one plan serves a 100-fact and a
10,000-fact user alike (measured in `bench.recall_latency`)."""

PROFILE_READ = """
SELECT revision, schema_version, document, updated_at FROM profiles
WHERE org_id = %(org_id)s AND user_id = %(user_id)s
"""
"""The user's profile document; `recollect.longterm.profile` migrates it to the current shape."""
