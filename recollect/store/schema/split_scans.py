"""The covering vector indexes ordered by fact id within a scope, so a large user's dense read
can be cut in two ranges of ids read at once on two connections.

A dense read of a large user scans every one of the user's entries in `facts_live_halves` (the
exact read) or `facts_live_bits` (the codes' read): a cost that grows with the user and runs
on one core. With the id in the key after the scope, `id < %(split_id)s` and
`id >= %(split_id)s` are conditions of the index scan itself, each range scans only its own
entries, and recall reads the two on two connections (`fact_sql.DENSE_EXACT_PARTS`). The
entries are the same size as before (the id moves from the included columns to the key).
"""

from __future__ import annotations

from recollect.store.schema.covering_reads import CODED, COVERED, UNENDED
from recollect.store.schema.half_vectors import HALVED

SPLIT_SCANS_SQL = f"""
DROP INDEX facts_live_bits;
CREATE INDEX facts_live_bits ON facts (org_id, user_id, session_id, embedding_dim, id)
    INCLUDE (embedding_bits) WHERE {UNENDED} AND {COVERED} AND {CODED};
DROP INDEX facts_live_halves;
CREATE INDEX facts_live_halves ON facts (org_id, user_id, session_id, embedding_dim, id)
    INCLUDE (embedding_half) WHERE {UNENDED} AND {COVERED} AND {HALVED};
"""
