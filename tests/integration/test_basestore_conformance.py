"""LangGraph's store behaviour, checked against `RecollectStore`: the checks `langgraph`'s own
store tests make (batches in order, get/put/delete, search with filters, limits and offsets,
namespace prefixes and suffixes, depth), on namespaces under one user's facts."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langgraph.store.base import GetOp, Item, ListNamespacesOp, MatchCondition, PutOp, SearchOp
from psycopg_pool import ConnectionPool

from recollect.basestore.store import RecollectStore
from tests.support.memory import memory_over
from tests.support.scripted_openai import ScriptedOpenAI


def ns(*labels: str) -> tuple[str, ...]:
    """A namespace under alice's facts: where the upstream checks put `("test", ...)`."""
    return ("acme", "alice", "facts", *labels)


@pytest.fixture
def store(pool: ConnectionPool[Any], scripted_llm: ScriptedOpenAI) -> RecollectStore:
    return RecollectStore(memory_over(pool, scripted_llm))


def test_a_batch_answers_in_the_order_it_was_asked(store: RecollectStore) -> None:
    store.put(ns("test", "foo"), "key1", {"data": "value1"})
    store.put(ns("test", "bar"), "key2", {"data": "value2"})
    results = store.batch(
        [
            GetOp(namespace=ns("test", "foo"), key="key1"),
            PutOp(namespace=ns("test", "bar"), key="key2", value={"data": "value2"}),
            SearchOp(namespace_prefix=ns("test"), filter={"data": "value1"}, limit=10, offset=0),
            ListNamespacesOp(
                match_conditions=(MatchCondition("prefix", ns()),), limit=10, offset=0
            ),
            GetOp(namespace=ns("test"), key="key3"),
        ]
    )
    assert len(results) == 5
    assert isinstance(results[0], Item)
    assert (results[0].key, results[0].value) == ("key1", {"data": "value1"})
    assert results[1] is None
    assert isinstance(results[2], list)
    assert len(results[2]) == 1
    assert isinstance(results[3], list)
    assert len(results[3]) > 0
    assert results[4] is None

    reordered = store.batch(
        [
            SearchOp(namespace_prefix=ns("test"), filter=None, limit=5, offset=0),
            GetOp(namespace=ns("test", "bar"), key="key2"),
            ListNamespacesOp(match_conditions=(MatchCondition("prefix", ns()),), limit=5, offset=0),
            PutOp(namespace=ns("test"), key="key3", value={"data": "value3"}),
            GetOp(namespace=ns("test", "foo"), key="key1"),
        ]
    )
    assert isinstance(reordered[0], list)
    assert len(reordered[0]) >= 2
    assert isinstance(reordered[1], Item)
    assert reordered[1].value == {"data": "value2"}
    assert isinstance(reordered[2], list)
    assert len(reordered[2]) > 0
    assert reordered[3] is None
    assert isinstance(reordered[4], Item)
    assert reordered[4].value == {"data": "value1"}


def test_get_put_and_delete_in_one_batch(store: RecollectStore) -> None:
    store.batch(
        [
            PutOp(namespace=ns("test"), key="key1", value={"data": "value1"}),
            PutOp(namespace=ns("test"), key="key2", value={"data": "value2"}),
            PutOp(namespace=ns("test"), key="key3", value=None),
        ]
    )
    got = store.batch(
        [
            GetOp(namespace=ns("test"), key="key1"),
            GetOp(namespace=ns("test"), key="key2"),
            GetOp(namespace=ns("test"), key="key3"),
        ]
    )
    assert [g.key if isinstance(g, Item) else g for g in got] == ["key1", "key2", None]
    assert isinstance(got[1], Item)
    assert got[1].value == {"data": "value2"}


def test_search_operations_in_a_batch(store: RecollectStore) -> None:
    for labels, key, value in [
        (("test", "foo"), "key1", {"data": "value1", "tag": "a"}),
        (("test", "bar"), "key2", {"data": "value2", "tag": "a"}),
        (("test", "baz"), "key3", {"data": "value3", "tag": "b"}),
    ]:
        store.put(ns(*labels), key, value)
    tagged, first_two, foo = store.batch(
        [
            SearchOp(namespace_prefix=ns("test"), filter={"tag": "a"}, limit=10, offset=0),
            SearchOp(namespace_prefix=ns("test"), filter=None, limit=2, offset=0),
            SearchOp(namespace_prefix=ns("test", "foo"), filter=None, limit=10, offset=0),
        ]
    )
    assert isinstance(tagged, list)
    assert len(tagged) == 2
    assert all(item.value["tag"] == "a" for item in tagged)
    assert isinstance(first_two, list)
    assert len(first_two) == 2
    assert isinstance(foo, list)
    assert [i.namespace for i in foo] == [ns("test", "foo")]


def test_basic_put_get_update_delete(store: RecollectStore) -> None:
    namespace = ns("test", "documents")
    value = {"title": "Test Document", "content": "Hello, World!"}
    store.put(namespace, "doc1", value)
    item = store.get(namespace, "doc1")
    assert item is not None
    assert (item.namespace, item.key, item.value) == (namespace, "doc1", value)

    updated = {"title": "Updated Document", "content": "Hello, Updated!"}
    store.put(namespace, "doc1", updated)
    again = store.get(namespace, "doc1")
    assert again is not None
    assert again.value == updated
    assert again.updated_at > item.updated_at
    assert store.get(ns("test", "other_documents"), "doc1") is None

    store.delete(namespace, "doc1")
    assert store.get(namespace, "doc1") is None


def test_list_namespaces_by_prefix_suffix_depth_and_page(store: RecollectStore) -> None:
    labels = [
        ("test", "documents", "public"),
        ("test", "documents", "private"),
        ("test", "images", "public"),
        ("test", "images", "private"),
        ("prod", "documents", "public"),
        ("prod", "documents", "private"),
    ]
    for label in labels:
        store.put(ns(*label), "dummy", {"content": "dummy"})

    every = store.list_namespaces(prefix=ns())
    assert sorted(every) == sorted(ns(*label) for label in labels)
    under_test = store.list_namespaces(prefix=ns("test"))
    assert len(under_test) == 4
    assert all(n[3] == "test" for n in under_test)
    public = store.list_namespaces(prefix=ns(), suffix=("public",))
    assert len(public) == 3
    assert all(n[-1] == "public" for n in public)
    wildcard = store.list_namespaces(prefix=("acme", "alice", "*", "*", "documents"))
    assert len(wildcard) == 4
    shallow = store.list_namespaces(prefix=ns(), max_depth=5)
    assert sorted(shallow) == [ns("prod", "documents"), ns("test", "documents"),
                               ns("test", "images")]  # fmt: skip
    assert len(store.list_namespaces(prefix=ns(), limit=3)) == 3
    assert store.list_namespaces(prefix=ns(), limit=3, offset=3) == sorted(every)[3:6]

    for label in labels:
        store.delete(ns(*label), "dummy")
    assert store.list_namespaces(prefix=ns()) == []


def test_search_by_namespace_value_filter_and_page(store: RecollectStore) -> None:
    data = [
        (
            ("test", "docs"),
            "doc1",
            {"title": "First Doc", "author": "Alice", "tags": ["important"]},
        ),
        (("test", "docs"), "doc2", {"title": "Second Doc", "author": "Bob", "tags": ["draft"]}),
        (("test", "images"), "img1", {"title": "Image 1", "author": "Alice", "tags": ["final"]}),
    ]
    for labels, key, value in data:
        store.put(ns(*labels), key, value)
    assert len(store.search(ns("test"))) == 3
    docs = store.search(ns("test", "docs"))
    assert len(docs) == 2
    assert all(i.namespace == ns("test", "docs") for i in docs)
    alice = store.search(ns("test"), filter={"author": "Alice"})
    assert len(alice) == 2
    assert all(i.value["author"] == "Alice" for i in alice)
    assert len(store.search(ns("test"), limit=2)) == 2
    assert len(store.search(ns("test"), offset=2)) == 1
    assert store.search(ns("test"), filter={"tags": ["draft"]})[0].key == "doc2"
    for labels, key, _ in data:
        store.delete(ns(*labels), key)
    assert store.search(ns("test")) == []


def test_comparison_filters_compare_numbers_as_numbers(store: RecollectStore) -> None:
    scores_ns = ns("test", "scores")
    for key, score in [("a", 2), ("b", 9), ("c", 10), ("d", 11)]:
        store.put(scores_ns, key, {"score": score})

    def scores(condition: dict[str, Any]) -> list[Any]:
        return sorted(i.value["score"] for i in store.search(scores_ns, filter=condition))

    assert scores({"score": {"$gte": 10}}) == [10, 11]
    assert scores({"score": {"$gt": 9}}) == [10, 11]
    assert scores({"score": {"$lt": 10}}) == [2, 9]
    assert scores({"score": {"$lte": 9}}) == [2, 9]
    assert scores({"score": {"$ne": 9}}) == [2, 10, 11]
    store.put(scores_ns, "e", {"score": 9.5})
    assert scores({"score": {"$gt": 9}}) == [9.5, 10, 11]
    names_ns = ns("test", "names")
    store.put(names_ns, "a", {"name": "apple"})
    store.put(names_ns, "b", {"name": "banana"})
    found = store.search(names_ns, filter={"name": {"$gt": "apple"}})
    assert [i.value["name"] for i in found] == ["banana"]


def test_the_async_twins_answer_alike(store: RecollectStore) -> None:
    asyncio.run(_async_round_trip(store))


async def _async_round_trip(store: RecollectStore) -> None:
    await store.aput(ns("async"), "k", {"text": "Prefers window seats"})
    item = await store.aget(ns("async"), "k")
    assert item is not None
    assert item.value == {"text": "Prefers window seats"}
    found = await store.asearch(ns(), query="window seat")
    assert [i.key for i in found] == ["k"]
    assert await store.alist_namespaces(prefix=ns()) == [ns("async")]
    await store.adelete(ns("async"), "k")
    assert await store.aget(ns("async"), "k") is None
