"""A query search never hides what listing shows: over every kind of item (stored items under
labels, facts no item names, profile fields, the organisation's facts) and beside episodes,
for many prefixes, filters and pages, `search(prefix, query=q)` ranks exactly the items
`search(prefix)` lists, best first, each with a score in [0, 1]. Real Postgres, and the real
offline embedder, whose compressed cosines are what the calibration has to get right."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.store.base import SearchItem
from psycopg_pool import ConnectionPool

from recollect.auth.identity import Identity
from recollect.basestore.store import RecollectStore
from recollect.longterm.facts import LongTermMemory
from recollect.longterm.records import FactCategory, NewEpisode, NewFact
from recollect.models.embeddings import init_embeddings
from recollect.store.scope import ORG_ADMIN, Scope

ALICE = Scope.for_user("acme", "alice")
FACTS = ("acme", "alice", "facts")
ORG = ("acme", "@org", "facts")
PROFILE = ("acme", "alice", "profile")

ITEMS: list[tuple[tuple[str, ...], str, dict[str, Any]]] = [
    ((*FACTS, "travel"), "seat", {"text": "Prefers window seats on long flights",
                                  "category": "preference", "tag": "a", "rank": 1}),
    ((*FACTS, "travel"), "hotel", {"text": "Books hotels close to the train station",
                                   "tag": "b", "rank": 2}),
    ((*FACTS, "travel", "2026"), "trip", {"text": "Planning a trip to Kyoto in April",
                                          "category": "goal", "tag": "a", "rank": 3}),
    ((*FACTS, "food"), "allergy", {"text": "Allergic to shellfish", "category": "constraint",
                                   "tag": "a", "rank": 4}),
    ((*FACTS, "food"), "coffee", {"text": "Drinks oat milk flat whites", "tag": "b", "rank": 5}),
    (FACTS, "bike", {"text": "Owns a red bicycle", "tag": "b", "rank": 6}),
    (FACTS, "job", {"content": "Works at Globex as a data engineer", "tag": "a", "rank": 7}),
    ((*ORG, "policies"), "deploys", {"text": "Deploys happen on Fridays", "tag": "a", "rank": 8}),
    (ORG, "office", {"text": "The office is closed on public holidays", "tag": "b", "rank": 9}),
]  # fmt: skip
EXTRACTED = ["Has a dog called Biscuit", "Speaks Portuguese and Dutch"]
EPISODES = ["Planned the Kyoto trip and booked window seats", "Debugged a Globex data pipeline"]

PREFIXES = [
    ("acme",),
    ("acme", "alice"),
    FACTS,
    (*FACTS, "travel"),
    (*FACTS, "travel", "2026"),
    (*FACTS, "food"),
    PROFILE,
    ("acme", "@org"),
    ("acme", "*", "facts"),
    ("acme", "alice", "*", "travel"),
]
QUERIES = [
    "which seat do I like on planes",  # related to one item
    "quarterly tax filing deadline",  # related to none
    "where does the user work",  # the answer shares no word with it
    "is it",  # no content at all
]
FILTERS: list[dict[str, Any] | None] = [None, {"tag": "a"}, {"rank": {"$gte": 4}}]


@pytest.fixture
def store(pool: ConnectionPool[Any]) -> RecollectStore:
    memory = LongTermMemory(pool, embedder=init_embeddings("offline"))
    store = RecollectStore(memory, identity=Identity("acme", "alice", frozenset({ORG_ADMIN})))
    for namespace, key, value in ITEMS:
        store.put(namespace, key, value)
    store.put(PROFILE, "timezone", {"value": "Europe/Lisbon"})
    for text in EXTRACTED:
        memory.remember(ALICE, NewFact(text=text, category=FactCategory.BIOGRAPHICAL))
    for summary in EPISODES:  # recalled beside facts by the engine, never items of the store
        memory.record_episode(ALICE, NewEpisode(summary=summary))
    return store


def _keys(items: list[SearchItem]) -> list[tuple[tuple[str, ...], str]]:
    return [(tuple(i.namespace), i.key) for i in items]


def test_a_query_search_ranks_exactly_what_the_listing_shows(store: RecollectStore) -> None:
    kinds_seen: set[str] = set()
    for number, prefix in enumerate(PREFIXES):
        condition = FILTERS[number % len(FILTERS)]
        listed = store.search(prefix, filter=condition, limit=1000)
        kinds_seen.update(i.namespace[1] if i.namespace[1] == "@org" else i.namespace[2]
                          for i in listed)  # fmt: skip
        query = QUERIES[number % len(QUERIES)]
        case = f"{prefix} {condition} {query!r}"
        ranked = store.search(prefix, query=query, filter=condition, limit=1000)
        assert sorted(_keys(ranked)) == sorted(_keys(listed)), case
        scores = [i.score for i in ranked]
        assert all(s is not None and 0.0 <= s <= 1.0 for s in scores), case
        assert scores == sorted(scores, reverse=True), case
        if number % 4 == 1:
            offset = max(len(ranked) - 3, 0)
            page = store.search(prefix, query=query, filter=condition, limit=2, offset=offset)
            assert _keys(page) == _keys(ranked)[offset : offset + 2], case
    assert kinds_seen == {"facts", "profile", "@org"}
    every = store.search(("acme",), limit=1000)
    assert len(every) == len(ITEMS) + len(EXTRACTED) + 3  # timezone, preferences, constraints
    assert not any("Debugged" in str(i.value) for i in every)  # episodes are not items


def test_scores_tell_a_related_query_from_an_unrelated_one(store: RecollectStore) -> None:
    off_topic = store.search(("acme",), query="quarterly tax filing deadline", limit=1000)
    assert off_topic
    assert all(i.score is not None and 0.0 <= i.score < 0.6 for i in off_topic), [
        (i.key, i.score) for i in off_topic
    ]
    unrelated = {i.key: i.score or 0.0 for i in off_topic}
    for query, key in [
        ("which seat do I like on planes", "seat"),
        ("where does the user work", "job"),
        ("when do we deploy", "deploys"),
        ("what time zone am I in", "timezone"),
    ]:
        found = store.search(("acme",), query=query, limit=1000)
        related = next(i.score or 0.0 for i in found if i.key == key)
        assert related >= 0.7, (query, related)
        assert related - unrelated[key] >= 0.4, (query, related, unrelated[key])
        assert found[0].key in {key, "preferences"}, query  # the profile carries the seat too
    assert all(i.score == 0.0 for i in store.search(("acme",), query="is it", limit=1000))
