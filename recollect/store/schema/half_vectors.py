"""Unended facts' vectors at half precision in the covering index the exact dense read scans.

The exact read of a user of 10,000 facts scanned `facts_live_vectors`: 10,000 entries of about
1.6 KB, and the scan alone, before any distance, cost 8 ms of the read's 10 (the entries are
copied out of 2,700 pages). `embedding_half` is the embedding scaled to length 1 and stored as
pgvector's `halfvec` (2 bytes a dimension), so the index the read scans is half as large. The
read ranks by it and keeps the best `dense_limit`; the rows of those, which recall reads
anyway, give their similarities at full precision (`fact_sql.EXACT_SIMILARITY`), so the order
recall ranks by is the exact one, and only a near tie at the last place can differ from an
exact scan's.

Scaling first keeps every value within `halfvec`'s range (a component of any size would
otherwise fail the write), and costs nothing to the ranking: cosine distance ignores length.
Only embeddings the covering indexes hold (`COVERED_MAX_DIM`) get one; wider ones are read
from the heap as before.
"""

from __future__ import annotations

from recollect.store.schema.covering_reads import COVERED, UNENDED
from recollect.store.schema.long_term import COVERED_MAX_DIM

HALVED = "embedding_half IS NOT NULL"
"""Marks the predicate of `facts_live_halves`; only the exact read spells it (see `CODED`)."""
QUERY_HALF = "(SELECT l2_normalize(%(vector)s::vector)::halfvec)"
"""The query scaled and halved as `embedding_half` is, made once per read."""

HALF_VECTORS_SQL = f"""
ALTER TABLE facts ADD COLUMN embedding_half halfvec GENERATED ALWAYS AS (
    CASE WHEN vector_dims(embedding) <= {COVERED_MAX_DIM} THEN l2_normalize(embedding)::halfvec END
) STORED;
CREATE INDEX facts_live_halves ON facts (org_id, user_id, session_id, embedding_dim)
    INCLUDE (id, embedding_half) WHERE {UNENDED} AND {COVERED} AND {HALVED};
DROP INDEX facts_live_vectors;
"""
