"""The candidate generator the long-term memory engine runs, reproduced for the LoCoMo bench.

One table holds every conversation's facts, scoped by `conv` the way the engine scopes by
user: an embedding column (pgvector, exact cosine scan) and a generated English tsvector.
`LocomoIndex.recollect_recall` is the single seam: swap its body for the engine's `recall`
and the benchmark measures the engine instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pgvector.psycopg import register_vector
from psycopg import Connection

from recollect.memory.ranking import Ranked, rank
from recollect.memory.recipe import Candidate, RecallRecipe
from recollect.memory.rerank import Reranker
from recollect.state.memory import FactCategory

CREATE_TABLE = """
CREATE EXTENSION IF NOT EXISTS vector;
DROP TABLE IF EXISTS locomo_facts;
CREATE TABLE locomo_facts (
    id text PRIMARY KEY,
    conv integer NOT NULL,
    text text NOT NULL,
    sources text[] NOT NULL,
    category text NOT NULL,
    confidence real NOT NULL,
    learned_at timestamptz NOT NULL,
    embedding vector({dims}),
    tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED
);
CREATE INDEX locomo_facts_conv ON locomo_facts (conv);
CREATE INDEX locomo_facts_tsv ON locomo_facts USING gin (tsv);
"""

INSERT_FACT = """
INSERT INTO locomo_facts (id, conv, text, sources, category, confidence, learned_at, embedding)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s)
"""

DENSE_SQL = """
SELECT id, 1 - (embedding <=> %(vector)s) AS similarity
FROM locomo_facts
WHERE conv = %(conv)s AND embedding IS NOT NULL
ORDER BY embedding <=> %(vector)s, id
LIMIT %(limit)s
"""

# Query handling: the question's own lexemes (stemmed, stop words dropped) joined with OR.
# websearch_to_tsquery ANDs every word, and a question almost never shares all its words
# with one fact (it matches 13% of LoCoMo questions at all).
LEXICAL_ANY_SQL = """
WITH q AS (
    SELECT to_tsquery('simple', coalesce(string_agg(quote_literal(lexeme), ' | '), '')) AS query
    FROM unnest(tsvector_to_array(to_tsvector('english', %(query)s))) AS lexeme
)
SELECT f.id, ts_rank_cd(f.tsv, q.query) AS score
FROM locomo_facts AS f, q
WHERE f.conv = %(conv)s AND f.tsv @@ q.query
ORDER BY score DESC, f.id
LIMIT %(limit)s
"""

LEXICAL_ALL_SQL = """
SELECT f.id, ts_rank_cd(f.tsv, q.query) AS score
FROM locomo_facts AS f, websearch_to_tsquery('english', %(query)s) AS q(query)
WHERE f.conv = %(conv)s AND f.tsv @@ q.query
ORDER BY score DESC, f.id
LIMIT %(limit)s
"""

FACT_ROWS_SQL = """
SELECT id, text, category, confidence, learned_at FROM locomo_facts WHERE id = ANY(%s)
"""


@dataclass(frozen=True)
class Fact:
    id: str
    conv: int
    text: str
    sources: tuple[str, ...]
    learned_at: datetime


class LocomoIndex:
    """Facts in Postgres, candidates from SQL, order from `recollect.memory.ranking.rank`."""

    def __init__(self, conn: Connection[Any], dims: int) -> None:
        self.conn = conn
        self.dims = dims
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        register_vector(conn)
        conn.execute(CREATE_TABLE.format(dims=dims))

    def ingest(self, facts: Sequence[Fact], vectors: Sequence[Sequence[float]] | None) -> None:
        import numpy as np

        rows = [
            (
                fact.id,
                fact.conv,
                fact.text,
                list(fact.sources),
                FactCategory.EVENT.value,
                1.0,
                fact.learned_at,
                np.asarray(vectors[i], dtype=np.float32) if vectors is not None else None,
            )
            for i, fact in enumerate(facts)
        ]
        with self.conn.cursor() as cur:
            cur.executemany(INSERT_FACT, rows)
        self.conn.execute("ANALYZE locomo_facts")

    def candidates(
        self,
        conv: int,
        question: str,
        vector: Sequence[float] | None,
        recipe: RecallRecipe,
        *,
        any_word: bool = True,
    ) -> list[Candidate]:
        """Dense and lexical candidates, merged by id, with their ranks and raw scores."""
        import numpy as np

        dense: list[tuple[str, float]] = []
        if vector is not None and recipe.dense_limit:
            dense = [
                (row[0], float(row[1]))
                for row in self.conn.execute(
                    DENSE_SQL,
                    {
                        "vector": np.asarray(vector, dtype=np.float32),
                        "conv": conv,
                        "limit": recipe.dense_limit,
                    },
                ).fetchall()
            ]
        lexical: list[tuple[str, float]] = []
        if recipe.lexical_limit:
            sql = LEXICAL_ANY_SQL if any_word else LEXICAL_ALL_SQL
            lexical = [
                (row[0], float(row[1]))
                for row in self.conn.execute(
                    sql, {"query": question, "conv": conv, "limit": recipe.lexical_limit}
                ).fetchall()
            ]
        ids = list(dict.fromkeys([i for i, _ in dense] + [i for i, _ in lexical]))
        rows = {row[0]: row for row in self.conn.execute(FACT_ROWS_SQL, (ids,)).fetchall()}
        dense_at = {fact_id: (n + 1, score) for n, (fact_id, score) in enumerate(dense)}
        lexical_at = {fact_id: (n + 1, score) for n, (fact_id, score) in enumerate(lexical)}
        out = []
        for fact_id in ids:
            _, text, category, confidence, learned_at = rows[fact_id]
            d = dense_at.get(fact_id)
            lx = lexical_at.get(fact_id)
            out.append(
                Candidate(
                    id=fact_id,
                    text=text,
                    category=FactCategory(category),
                    confidence=float(confidence),
                    learned_at=learned_at,
                    last_reinforced_at=learned_at,
                    dense_rank=d[0] if d else None,
                    similarity=d[1] if d else None,
                    lexical_rank=lx[0] if lx else None,
                    lexical_score=lx[1] if lx else None,
                )
            )
        return out

    def recollect_recall(
        self,
        conv: int,
        question: str,
        vector: Sequence[float] | None,
        recipe: RecallRecipe,
        now: datetime,
        reranker: Reranker | None = None,
        *,
        any_word: bool = True,
    ) -> list[Ranked]:
        """What the engine's `recall` returns for this scope: switch this body at merge."""
        found = self.candidates(conv, question, vector, recipe, any_word=any_word)
        return rank(question, found, recipe, now, reranker)[: recipe.k]

    def fulltext(self, conv: int, question: str, limit: int) -> list[str]:
        """The full-text baseline: Postgres full-text alone, ranked by ts_rank_cd."""
        rows = self.conn.execute(
            LEXICAL_ANY_SQL, {"query": question, "conv": conv, "limit": limit}
        ).fetchall()
        return [row[0] for row in rows]
