"""The write path's neighbours come from indexes bounded by what they match, not from every row
of the user: the same text in another case, the same subject, the nearest in meaning and in
words are found among many facts as they were when each read every live row."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from typing import Any

import pytest
from psycopg_pool import ConnectionPool

from recollect.longterm import fact_sql as sql
from recollect.longterm.facts import LongTermMemory, scope_params
from recollect.longterm.records import FactCategory, NewFact, RememberAction
from recollect.longterm.vectors import literal
from recollect.store.scope import Scope
from recollect.store.tenancy import scoped
from tests.support.word_facts import ingest_word_facts, unit_vector

ANA = Scope.for_user("acme", "ana")
ANA_SESSION = Scope.for_session("acme", "ana", "s-1")
DIM = 16
TEXTS = [
    "Ana keeps three hives of bees on the roof of her flat.",
    "Straße und Größe: Jürgen wohnt in der Müllerstraße 5.",
    "\u0130stanbul'da ya\u015f\u0131yor ve I\u011fd\u0131r'a s\u0131k s\u0131k gidiyor.",
    "\u039f\u03b4\u03c5\u03c3\u03c3\u03ad\u03b1\u03c2 lives in \u0391\u03b8\u03ae\u03bd\u03b1.",
    "Write to ana.maria@example.com or see https://Example.com/Path?Q=1 before 10:30.",
    "Her well-known pre-war flat in São Paulo costs R$ 2.500,00 a month.",
    "東京でTeaを飲むのが好きです。",
    "Loves 🐝 and ☕ — two of her favourite things!",
    "I AM",
]
"""Scripts, case rules (ß, dotted İ, final sigma), addresses, numbers and stop words only."""


def _cased(text: str) -> list[str]:
    return [text.upper(), text.lower(), text.title(), text.swapcase()]


def _same_subject_or_text(
    pool: ConnectionPool[Any], scope: Scope, text: str, subject: str | None = None
) -> set[str]:
    params = {**scope_params(scope), "now": datetime.now(UTC), "replaces": [], "text": text,
              "subject": subject, "vector": None, "dim": None}  # fmt: skip
    with scoped(pool, scope) as conn:
        rows = conn.execute(sql.SAME_SUBJECT_OR_TEXT[scope.kind], params).fetchall()
    return {r["id"] for r in rows}


@pytest.mark.parametrize("scope", [ANA, ANA_SESSION], ids=["user", "session"])
def test_the_same_text_in_any_case_is_found_among_many(
    pool: ConnectionPool[Any], scope: Scope
) -> None:
    memory = LongTermMemory(pool)
    ingest_word_facts(memory, scope, 300, random.Random(2), DIM)
    facts = [
        memory.remember(scope, NewFact(text=t, category=FactCategory.EVENT)).fact for t in TEXTS
    ]
    stored = {fact.text: fact.id for fact in facts}  # as stored: an address is kept redacted
    with scoped(pool, scope) as conn:
        live = {
            str(r["id"])
            for r in conn.execute(
                "SELECT id FROM facts WHERE superseded_by IS NULL AND valid_to IS NULL"
            ).fetchall()
        }  # one text's place replaces another's: only live facts are anyone's neighbours
        assert len(live & set(stored.values())) >= len(TEXTS) - 2
        for text, fact_id in stored.items():
            for variant in _cased(text):
                same = conn.execute(
                    "SELECT lower(%s) = lower(%s) AS same", (text, variant)
                ).fetchone()
                assert same is not None
                found = fact_id in _same_subject_or_text(pool, scope, variant)
                assert found == (same["same"] and fact_id in live), (text, variant)
    assert _same_subject_or_text(pool, scope, "Ana keeps three hives of bees on the roof") == set()


def test_the_same_subject_is_found_among_many(pool: ConnectionPool[Any]) -> None:
    memory = LongTermMemory(pool)
    ingest_word_facts(memory, ANA, 300, random.Random(3), DIM)
    home = memory.remember(
        ANA, NewFact(text="Ana lives in Lisbon", category=FactCategory.BIOGRAPHICAL, subject="home")
    )
    assert home.fact.subject is not None
    found = _same_subject_or_text(pool, ANA, "Ana moved to Porto", home.fact.subject)
    assert home.fact.id in found


def test_a_restatement_reinforces_and_a_near_neighbour_is_weighed(
    pool: ConnectionPool[Any],
) -> None:
    rng = random.Random(4)
    memory = LongTermMemory(pool)
    ingest_word_facts(memory, ANA, 300, rng, DIM)
    first = memory.remember(ANA, NewFact(text=TEXTS[0], category=FactCategory.EVENT))
    again = memory.remember(ANA, NewFact(text=TEXTS[0].upper(), category=FactCategory.EVENT))
    assert again.action is RememberAction.REINFORCED
    assert again.fact.id == first.fact.id

    vector = unit_vector(rng, DIM)
    dawn = NewFact(text="Orchid lantern summit at dawn", category=FactCategory.EVENT)
    with scoped(pool, ANA) as conn:
        near = memory.remember_in(conn, ANA, dawn, vector=vector).fact.id
    params = {**scope_params(ANA), "now": datetime.now(UTC), "vector": literal(vector),
              "dim": DIM, "limit": 5, "dense_limit": 20, "query": "dawn"}  # fmt: skip
    with scoped(pool, ANA) as conn:
        dense = conn.execute(sql.NEAREST_DENSE[ANA.kind], params).fetchall()
        words = conn.execute(sql.NEAREST_LEXICAL[ANA.kind], params).fetchall()
    assert dense[0]["id"] == near
    assert dense[0]["similarity"] == pytest.approx(1.0)
    assert near in {r["id"] for r in words}


@pytest.mark.parametrize("dim", [DIM, 600], ids=["covered", "wide"])
def test_a_restatement_is_a_dense_neighbour_at_any_width(
    pool: ConnectionPool[Any], dim: int
) -> None:
    rng = random.Random(5)
    memory = LongTermMemory(pool)
    vector = [rng.gauss(0.0, 1.0) for _ in range(dim)]
    first = NewFact(text="Ana keeps bees on her roof", category=FactCategory.EVENT)
    again = NewFact(text="Ana keeps bees on her roof!", category=FactCategory.EVENT)
    with scoped(pool, ANA) as conn:
        kept = memory.remember_in(conn, ANA, first, vector=vector)
    with scoped(pool, ANA) as conn:
        repeated = memory.remember_in(conn, ANA, again, vector=vector)
    assert repeated.action is RememberAction.REINFORCED
    assert repeated.fact.id == kept.fact.id
