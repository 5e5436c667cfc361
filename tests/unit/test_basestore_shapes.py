"""The store's pure parts: the namespace convention, what a value says as a fact, filters."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from recollect.basestore.namespaces import (
    SHARED,
    Kind,
    NamespaceError,
    check_key,
    matches_prefix,
    matches_suffix,
    parse,
    tenants_of,
)
from recollect.basestore.values import (
    MAX_TTL_MINUTES,
    ValueRejectedError,
    check_ttl,
    item_text,
    matches,
    offered,
)
from recollect.extraction.validation import ValidationPolicy
from recollect.store import clock

POLICY = ValidationPolicy()


@pytest.mark.parametrize(
    ("namespace", "owner", "kind", "labels"),
    [
        (("acme", "alice", "facts"), "alice", Kind.FACTS, ()),
        (("ACME", "Alice", "facts", "travel", "2024"), "alice", Kind.FACTS, ("travel", "2024")),
        (("acme", SHARED, "facts", "runbooks"), SHARED, Kind.FACTS, ("runbooks",)),
        (("acme", "alice", "profile"), "alice", Kind.PROFILE, ()),
    ],
)
def test_namespaces_name_scopes(
    namespace: tuple[str, ...], owner: str, kind: Kind, labels: tuple[str, ...]
) -> None:
    target = parse(namespace)
    assert (target.org_id, target.owner, target.kind, target.labels) == (
        "acme",
        owner,
        kind,
        labels,
    )


@pytest.mark.parametrize(
    "namespace",
    [
        (),
        ("acme",),
        ("acme", "alice"),
        ("acme", "alice", "memories"),
        ("acme", "alice", "profile", "extra"),
        ("acme", SHARED, "profile"),
        ("acme", "@admin", "facts"),
        ("acme", "x" * 200, "facts"),
        ("acme", "  ", "facts"),
        ("", "alice", "facts"),
        ("acme", "alice", "facts", ""),
        ("acme", "alice", "facts", *["x"] * 9),
        ("acme", "alice", "facts", "x" * 200),
    ],
)
def test_anything_else_is_one_line_error(namespace: tuple[str, ...]) -> None:
    with pytest.raises(NamespaceError) as refused:
        parse(namespace)
    assert "\n" not in str(refused.value)


def test_keys_and_prefixes() -> None:
    assert check_key("k" * 512) == "k" * 512
    for bad in ("", "k" * 513, "a\x00b"):
        with pytest.raises(NamespaceError):
            check_key(bad)
    assert tenants_of(("acme",)) is None
    assert tenants_of(("acme", "*", "facts")) is None
    assert tenants_of(("Acme", "Bob")) == ("acme", "bob")
    assert matches_prefix(("a", "b", "c"), ("a", "*"))
    assert not matches_prefix(("a", "b"), ("a", "b", "c"))
    assert matches_suffix(("a", "b", "c"), ("*", "c"))
    assert not matches_suffix(("c",), ("b", "c"))


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ({"text": "Prefers tea"}, "Prefers tea"),
        ({"content": "Prefers tea", "text": 3}, "Prefers tea"),
        (
            {"content": {"drink": "tea", "when": ["morning", "noon"]}},
            "drink: tea; when: morning, noon",
        ),
        ({"title": "Trip", "done": True, "category": "goal"}, "title: Trip; done: yes"),
        ({"score": 9.5, "note": None}, "score: 9.5"),
    ],
)
def test_the_text_a_value_is_recalled_by(value: dict[str, Any], text: str) -> None:
    assert item_text(value) == text


def test_an_offered_value_keeps_its_shape_and_loses_its_secrets() -> None:
    kept = offered({"text": "Prefers tea", "tags": ["a"]}, POLICY, "item")
    assert kept.value == {"text": "Prefers tea", "tags": ["a"]}
    assert kept.fact.category == "biographical"
    redacted = offered({"content": "Mail me at a@b.example", "cc": ["a@b.example"]}, POLICY, "i")
    assert redacted.value == {"content": "Mail me at [EMAIL]", "cc": ["[EMAIL]"]}
    dated = offered({"text": "Joined Globex", "learned_at": "2024-05-01"}, POLICY, "i")
    assert dated.fact.learned_at is not None
    assert dated.fact.learned_at.tzinfo is not None
    for bad in (
        "not a dict",
        {"text": "x", "learned_at": "soon"},
        {"text": "x", "subject": 5},
        {"text": "x", "confidence": True},
        {"text": "x", "category": 3},
        {"text": "x", "blob": "y" * 20_000},
        {"text": "x", "when": float("nan"), "bad": object()},
    ):
        with pytest.raises(ValueRejectedError):
            offered(bad, POLICY, "item")


def test_filters() -> None:
    value = {"n": 10, "s": "b", "tags": ["x"], "nested": {"a": 1, "b": 2}}
    assert matches(value, {"n": 10, "tags": ["x"]})
    assert matches(value, {"n": {"$gt": 9, "$lte": 10}, "s": {"$gte": "a"}})
    assert matches(value, {"nested": {"a": 1}})
    assert not matches(value, {"n": {"$gt": "9"}})  # a number is not compared with text
    assert not matches(value, {"missing": {"$lt": 1}})
    assert matches(value, {"missing": {"$ne": 1}})
    with pytest.raises(ValueError, match="unknown filter operator"):
        matches(value, {"n": {"$near": 1}})


@pytest.mark.parametrize(
    "ttl", [0, -1, 5e9, 1e308, float("inf"), float("nan"), True, "60", MAX_TTL_MINUTES + 1]
)
def test_a_ttl_out_of_bounds_is_refused_before_anything_is_written(ttl: Any) -> None:
    with pytest.raises(ValueRejectedError, match="ttl must be"):
        check_ttl(ttl, "item")


@pytest.mark.parametrize("ttl", [None, 0.5, 60, MAX_TTL_MINUTES])
def test_a_ttl_within_bounds_is_kept(ttl: Any) -> None:
    check_ttl(ttl, "item")


def _ahead(delta: timedelta, naive: bool = False) -> str:
    """A moment `delta` from now, made when the test runs (not when it is collected)."""
    moment = clock.now() + delta
    return (moment.replace(tzinfo=None) if naive else moment).isoformat()


@pytest.mark.parametrize(
    ("fixed", "delta", "naive"),
    [
        ("9999-12-31", None, False),
        ("9999-12-31T23:59:59+14:00", None, False),
        (None, timedelta(days=1), False),
        (None, timedelta(hours=1), True),
        (None, timedelta(minutes=6), False),
    ],
)
def test_a_learned_at_in_the_future_is_refused(
    fixed: str | None, delta: timedelta | None, naive: bool
) -> None:
    learned_at = fixed or _ahead(delta or timedelta(0), naive)
    with pytest.raises(ValueRejectedError, match="future"):
        offered({"text": "Joined Globex", "learned_at": learned_at}, POLICY, "item")


@pytest.mark.parametrize(
    ("fixed", "delta", "naive"),
    [("1999-01-01", None, False), (None, timedelta(0), False), (None, -timedelta(days=400), True)],
)
def test_a_learned_at_of_the_past_or_now_is_kept(
    fixed: str | None, delta: timedelta | None, naive: bool
) -> None:
    learned_at = fixed or _ahead(delta or timedelta(0), naive)
    assert offered({"text": "Joined Globex", "learned_at": learned_at}, POLICY, "i").fact.learned_at
