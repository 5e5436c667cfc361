"""A user past `CENTRED_FROM` facts of a width has their codes taken less their own mean, so a
sentence embedder's vectors, which share most of their signs, can still be ranked by codes."""

from __future__ import annotations

import random
from array import array
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import psycopg
from langchain_core.embeddings import DeterministicFakeEmbedding
from psycopg import Connection
from psycopg_pool import ConnectionPool

from recollect.longterm.fact_sql import CODES_SPREAD, EXACT_UP_TO
from recollect.longterm.facts import LongTermMemory
from recollect.longterm.recall import plan_recall, reads
from recollect.longterm.recipe import Method, RecallRecipe
from recollect.longterm.records import FactCategory, NewFact
from recollect.longterm.vectors import literal
from recollect.store import migrations
from recollect.store.schema.centred_codes import CENTRED_BELOW, CENTRED_FROM, code
from recollect.store.scope import Scope
from recollect.store.server import CONNECTION_KWARGS, with_database
from recollect.store.tenancy import scoped
from tests.support import clusters
from tests.support.code_centres import record_centre
from tests.support.db import all_rows
from tests.support.generic_plans import explain_generic
from tests.support.word_facts import unit_vector

DIM = 64
TOPICS = 400
"""Directions in the cone; a user's facts are near copies of them, as real notes cluster."""
MISCODED = f"""
SELECT count(*) AS n, count(*) FILTER (WHERE f.embedding_bits IS DISTINCT FROM
       {code("f.embedding", "c.centre")}) AS miscoded
FROM facts AS f LEFT JOIN code_centres AS c
  ON c.org_id = f.org_id AND c.user_id = f.user_id AND c.embedding_dim = f.embedding_dim
WHERE f.org_id = %s AND f.user_id = %s
"""
"""How many of a user's facts there are, and how many lack the code of their vector less their
centre (their own signs where there is none), read past the policies."""
CENTRES = (
    "SELECT embedding_dim, facts, centre IS NOT NULL AS centred FROM code_centres"
    " WHERE org_id = %s AND user_id = %s"
)
XMINS = "SELECT count(DISTINCT xmin::text) AS writes FROM facts WHERE org_id = %s AND user_id = %s"
"""How many transactions wrote the user's current rows: a fact coded again is written anew."""
FIRST_IMPORT = " AND split_part(text, ' ', 2)::int < 15000"
OLD_FACTS = """
INSERT INTO facts (org_id, user_id, category, text, confidence, learned_at, last_reinforced_at,
                   embedding)
SELECT 'acme', %(user)s, 'event', 'note ' || n.i, 0.8, now(), now(),
       (SELECT array_agg(%(low)s + random()) FROM generate_series(1, %(dim)s) WHERE n.i > 0)::vector
FROM generate_series(1, %(count)s) AS n (i)
"""
"""Facts as a database before centring held them (written past the policies): components from
`low` to `low` + 1, all positive (a cone) from 0, any sign from -0.5."""
OLD_USERS = (
    ("large", CENTRED_FROM + 1, 0.0),
    ("spread", CENTRED_FROM + 1, -0.5),
    ("small", 30, 0.0),
)
CENTRING_MIGRATION = 32
ALL_VISIBLE = (
    "SELECT relpages > 0 AND relallvisible = relpages AS all_visible FROM pg_class"
    " WHERE relname = 'facts'"
)
HAND_WRITTEN = """
INSERT INTO facts (org_id, user_id, category, text, confidence, learned_at,
                   last_reinforced_at, embedding)
VALUES (%s, %s, 'event', %s, 0.8, now(), now(), %s::vector)
"""


def test_the_codes_rank_a_cone_once_its_user_is_centred(pool: ConnectionPool[Any]) -> None:
    """Vectors in one narrow cone share most of their signs: the import that takes their user
    past `CENTRED_FROM` records their mean and codes every fact less it (those stored before it
    and its own), and the coded read (not the exact one) returns an exact scan's nearest."""
    scope = Scope.for_user("acme", "cone")
    rng = random.Random(17)
    topics = [_cone(rng) for _ in range(TOPICS)]
    vectors = [_cone(rng, topics[i % TOPICS]) for i in range(CENTRED_FROM + 50)]
    memory = _notes(pool, scope, vectors[:15_000], k=10)
    assert all_rows(pool, CENTRES, "acme", "cone") == []
    memory.ingest(scope, _facts(15_000, len(vectors)), embeddings=vectors[15_000:])
    assert all_rows(pool, CENTRES, "acme", "cone") == [
        {"embedding_dim": DIM, "facts": len(vectors), "centred": True}
    ]
    assert all_rows(pool, MISCODED, "acme", "cone") == [{"n": len(vectors), "miscoded": 0}]
    stored = [[float(array("f", [x])[0]) for x in vector] for vector in vectors]
    for topic in topics[:3]:
        query = _cone(rng, topic)
        cosines = [sum(a * b for a, b in zip(v, query, strict=True)) for v in stored]
        nearest = sorted(range(len(vectors)), key=lambda i: -cosines[i])[:10]
        for _ in ("counted", "sized"):
            found = memory.recall(scope, "which note?", query_embedding=query)
            assert [int(r.fact.text.split()[1]) for r in found.facts] == nearest
    text = _dense_plan(pool, scope, query, len(vectors))
    exact = [line for line in text.splitlines() if "using facts_live_halves" in line]
    assert len(exact) == 1, text
    assert "never executed" in exact[0], text


def test_codes_that_split_their_facts_already_stay_plain(pool: ConnectionPool[Any]) -> None:
    """Vectors in every direction: the plain codes already differ in about half their signs, so
    the user passing `CENTRED_FROM` records a NULL centre, and no fact is coded again."""
    scope = Scope.for_user("acme", "everywhere")
    rng = random.Random(31)
    vectors = [unit_vector(rng, DIM) for _ in range(CENTRED_FROM + 50)]
    memory = _notes(pool, scope, vectors[:15_000], k=10)
    written = all_rows(pool, XMINS, "acme", "everywhere")
    memory.ingest(scope, _facts(15_000, len(vectors)), embeddings=vectors[15_000:])
    assert all_rows(pool, CENTRES, "acme", "everywhere") == [
        {"embedding_dim": DIM, "facts": len(vectors), "centred": False}
    ]
    assert all_rows(pool, MISCODED, "acme", "everywhere") == [{"n": len(vectors), "miscoded": 0}]
    first = all_rows(pool, XMINS + FIRST_IMPORT, "acme", "everywhere")
    assert first == written  # the first import's rows were not written again


def test_remember_centres_the_user_it_takes_past_the_limit(pool: ConnectionPool[Any]) -> None:
    """An import up to `CENTRED_FROM` facts leaves the plain signs; the fact `remember` adds
    after it records the centre and recodes the user's facts, the new one too."""
    scope = Scope.for_user("acme", "one-more")
    rng = random.Random(29)
    _notes(pool, scope, [_cone(rng) for _ in range(CENTRED_FROM)], k=10)
    assert all_rows(pool, CENTRES, "acme", "one-more") == []
    before = all_rows(pool, MISCODED, "acme", "one-more")
    assert before == [{"n": CENTRED_FROM, "miscoded": 0}]  # their own signs, without a centre
    writer = LongTermMemory(pool, embedder=DeterministicFakeEmbedding(size=DIM))
    writer.remember(scope, NewFact(text="one more note", category=FactCategory.EVENT))
    centres = all_rows(pool, CENTRES, "acme", "one-more")
    assert centres == [{"embedding_dim": DIM, "facts": CENTRED_FROM + 1, "centred": True}]
    after = all_rows(pool, MISCODED, "acme", "one-more")
    assert after == [{"n": CENTRED_FROM + 1, "miscoded": 0}]


def test_a_fact_written_by_hand_is_coded_as_the_engine_codes_it(
    pool: ConnectionPool[Any],
) -> None:
    """SQL of one's own fills the code through the trigger: the plain signs for a user without
    a centre, the signs less the centre for one with it, and again when the embedding changes."""
    plain, centred = Scope.for_user("acme", "plain"), Scope.for_user("acme", "centred")
    rng = random.Random(41)
    record_centre(pool, centred, _cone(rng))
    for scope in (plain, centred):
        memory = LongTermMemory(pool)
        memory.ingest(scope, [NewFact(text="imported", category=FactCategory.EVENT)], [_cone(rng)])
        with scoped(pool, scope) as conn:
            _write_by_hand(conn, scope, rng)
            conn.execute(
                "UPDATE facts SET embedding = %s::vector WHERE text = 'imported'",
                (literal(_cone(rng)),),
            )
        assert all_rows(pool, MISCODED, scope.org_id, scope.user_id) == [{"n": 2, "miscoded": 0}]
    with scoped(pool, plain) as conn:
        row = conn.execute(
            "SELECT embedding_bits = binary_quantize(embedding)::varbit::bit(512) AS plain"
            " FROM facts WHERE text = 'by hand'"
        ).fetchone()
    assert row == {"plain": True}


def test_the_centres_follow_the_read_thresholds() -> None:
    """Codes are centred where recall starts to read them, and when they would not be read."""
    assert CENTRED_FROM == EXACT_UP_TO
    assert CENTRED_BELOW == CODES_SPREAD


def _write_by_hand(conn: Connection[Any], scope: Scope, rng: random.Random) -> None:
    conn.execute(HAND_WRITTEN, (scope.org_id, scope.user_id, "by hand", literal(_cone(rng))))


def _cone(rng: random.Random, topic: list[float] | None = None) -> list[float]:
    """A unit vector near the all-ones direction, as a sentence embedder's lie near their mean:
    a new direction, or a near copy of `topic`."""
    if topic is None:
        vector = [1.0 + 0.2 * rng.gauss(0.0, 1.0) for _ in range(DIM)]
    else:
        vector = [x + 0.01 * rng.gauss(0.0, 1.0) for x in topic]
    norm = sum(x * x for x in vector) ** 0.5
    return [x / norm for x in vector]


def _notes(
    pool: ConnectionPool[Any], scope: Scope, vectors: list[list[float]], *, k: int
) -> LongTermMemory:
    memory = LongTermMemory(pool, recipe=RecallRecipe(methods=(Method.DENSE,), k=k))
    memory.ingest(scope, _facts(0, len(vectors)), embeddings=vectors)
    return memory


def _facts(start: int, stop: int) -> list[NewFact]:
    """Facts "note start" to "note stop - 1"."""
    return [
        NewFact(text=f"note {i}", category=FactCategory.EVENT, confidence=0.8)
        for i in range(start, stop)
    ]


def _dense_plan(pool: ConnectionPool[Any], scope: Scope, query: list[float], size: int) -> str:
    recipe = RecallRecipe(methods=(Method.DENSE,))
    plan = plan_recall(scope, "which note?", recipe=recipe, embedder=None,
                       now=datetime.now(UTC), query_embedding=query)  # fmt: skip
    _, statement, params, _ = next(r for r in reads(replace(plan, size=size)) if r[0] == "dense")
    with scoped(pool, scope) as conn:
        return explain_generic(conn, statement, params, "(ANALYZE, COSTS OFF, TIMING OFF)")


def test_an_upgrade_centres_the_users_already_past_the_limit(postgres_server: str) -> None:
    """Migration 32, run by an owner without superuser: a user already past `CENTRED_FROM` whose
    plain codes share most signs gets a centre and every fact coded less it; one whose codes
    split their facts, and a smaller user, keep the plain signs; no fact is lost; and the
    rewritten table is vacuumed."""
    name = f"centring_{id(object())}"
    owner = clusters.owned_database(postgres_server, name, clusters.MIGRATING_OWNER)
    admin = with_database(postgres_server, name)
    try:
        with psycopg.connect(owner, **CONNECTION_KWARGS) as conn:
            assert migrations.setup(conn, up_to=CENTRING_MIGRATION - 1) == CENTRING_MIGRATION - 1
        with psycopg.connect(admin, **CONNECTION_KWARGS) as conn:
            for user, count, low in OLD_USERS:
                conn.execute(OLD_FACTS, {"user": user, "count": count, "dim": DIM, "low": low})
        with psycopg.connect(owner, **CONNECTION_KWARGS) as conn:
            assert migrations.setup(conn) == migrations.latest_version()
        with psycopg.connect(admin, **CONNECTION_KWARGS) as conn:
            centres = conn.execute(
                "SELECT user_id, facts, centre IS NOT NULL AS centred FROM code_centres"
                " ORDER BY user_id"
            ).fetchall()
            assert centres == [
                {"user_id": "large", "facts": CENTRED_FROM + 1, "centred": True},
                {"user_id": "spread", "facts": CENTRED_FROM + 1, "centred": False},
            ]
            for user, count, _ in OLD_USERS:
                row = conn.execute(MISCODED, ("acme", user)).fetchone()
                assert row == {"n": count, "miscoded": 0}
            visible = conn.execute(ALL_VISIBLE).fetchone()
            assert visible == {"all_visible": True}  # vacuumed: the covering indexes answer alone
    finally:
        with psycopg.connect(postgres_server, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
