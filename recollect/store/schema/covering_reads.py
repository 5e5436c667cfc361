"""Covering indexes of unended facts' words, vectors and binary codes: what recall scans.

Behind row-level security no index can answer `search @@ query` (the operator is not leakproof,
so it may only run on rows the policies have passed), and the GIN index on `facts.search` was
never used by a role that obeys them: a lexical read fetched every heap row of the user (58.7 ms
at 10,000 facts). `facts_live_words` holds each unended fact's tsvector beside its scope, so
the test runs on index entries of about 250 bytes; the GIN index, with no reader left, goes.

`facts_user_vectors` stopped answering the dense scan alone once facts gained `valid_to`: its
predicate does not say a fact is unended, so every scanned row was read from the heap as well
(a 10,000-fact user: 10,000 heap rows of 1.5 KB besides the index). `facts_live_vectors` holds
the same columns for facts that are neither replaced, deleted nor ended, so the scan reads the
index alone; the few facts still live with an end ahead (a plan replaces them on its day) are
read from the heap through `facts_ending`, which holds nothing else and costs ingest nothing.
(`facts_live_halves` later took its place, the same at half precision: `schema.half_vectors`.)

`embedding_dim` is the vector's width, stored, and a key of the vectors' and codes' indexes: a
scan matches the query's width inside the index instead of calling `vector_dims` on every row.

`embedding_bits` is pgvector's `binary_quantize` of the embedding, zero-padded to
`COVERED_MAX_DIM` bits (64 bytes), a stored generated column, so every write path fills it
(since `schema.centred_codes`, the write statements and a trigger fill it, and a large user's
are taken less their mean). A
user with more unended facts than `fact_sql.EXACT_UP_TO` is ranked by Hamming distance over
`facts_live_bits` (64 bytes a fact instead of 1.5 KB) and only the best `fact_sql.RESCORED` are
scored exactly.

Those columns took a row of a 384-dimension fact past Postgres's default 2 KB threshold, where
it compresses and moves the embedding to the TOAST table: a second insert on every write and a
second read for every exact rescoring. `toast_tuple_target` keeps rows of up to
`TOAST_TUPLE_TARGET` bytes whole (a 512-dimension embedding, its codes and a long sentence);
wider embeddings are moved out as before.
"""

from __future__ import annotations

from recollect.store.schema.long_term import COVERED_MAX_DIM

UNENDED = "num_nulls(superseded_by, deleted_at, valid_to) = 3"
"""Live, with no end set: nearly every fact, and the predicate of the covering indexes. Spelled
as one expression, not three `IS NULL` tests, so that `facts_live_scope` (whose predicate those
tests would prove) cannot serve the scan: behind row-level security a generic plan expects one
row of the user, and for one row that smaller index and a heap fetch cost less on paper; for a
user of 10,000 facts they read 10,000 heap rows instead of the covering index alone."""
COVERED = f"embedding_dim <= {COVERED_MAX_DIM}"
"""Embeddings small enough for a btree entry; a query repeats it so the planner may use it."""
SAME_WIDTH = "embedding_dim = %(dim)s::smallint"
"""The query's width, compared inside the covering indexes (`int2eq` is leakproof, so it may
run there behind row-level security)."""
CODED = "embedding_bits IS NOT NULL"
WORDED = "search IS NOT NULL"
"""`CODED` and `WORDED` mark the predicates of the codes' and the words' indexes, and only the
reads meant for each spell them: a generic plan expects one row of the user, and for one row
any index whose predicate a read implies, plus a heap fetch, costs less on paper than the right
covering index; for a user of 10,000 facts it reads 10,000 heap rows (one test per index holds
every read to its own, `tests/integration/test_covering_reads.py`)."""
TOAST_TUPLE_TARGET = 4080
"""Half a page: a 512-dimension row with a 2,000-character sentence still fits."""

COVERING_READS_SQL = f"""
ALTER TABLE facts SET (toast_tuple_target = {TOAST_TUPLE_TARGET});
ALTER TABLE facts
    ADD COLUMN embedding_dim smallint GENERATED ALWAYS AS (vector_dims(embedding)) STORED,
    ADD COLUMN embedding_bits bit({COVERED_MAX_DIM})
        GENERATED ALWAYS AS (binary_quantize(embedding)::varbit::bit({COVERED_MAX_DIM})) STORED;
CREATE INDEX facts_live_vectors ON facts (org_id, user_id, session_id, embedding_dim)
    INCLUDE (id, embedding) WHERE {UNENDED} AND {COVERED};
CREATE INDEX facts_live_bits ON facts (org_id, user_id, session_id, embedding_dim)
    INCLUDE (id, embedding_bits) WHERE {UNENDED} AND {COVERED} AND {CODED};
CREATE INDEX facts_live_words ON facts (org_id, user_id, session_id)
    INCLUDE (id, learned_at, search) WHERE {UNENDED} AND {WORDED};
CREATE INDEX facts_ending ON facts (org_id, user_id, session_id)
    WHERE superseded_by IS NULL AND deleted_at IS NULL AND valid_to IS NOT NULL;
DROP INDEX facts_user_vectors;
DROP INDEX facts_search;
"""
