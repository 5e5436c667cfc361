"""Text the database cannot store (NUL, unpaired surrogates) and JSON nested without bound are
found at the edge, in one pass, whatever their place in a document."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recollect.auth.bounded_json import body_refusal
from recollect.history.limits import UnstorableTextError, check_message
from recollect.store.storable import MAX_JSON_DEPTH, json_refusal, storable, unstorable

UNSTORABLE = ["tea\x00time", "\ud800", "a\udfffb", "\x00"]
STORABLE = ["tea time", "😀 emoji pairs are fine", "\\u0000 said in words", "", "日本語"]


@pytest.mark.parametrize("text", UNSTORABLE)
def test_unstorable_text_is_named_and_replaced(text: str) -> None:
    assert unstorable(text)
    assert unstorable(storable(text)) is None
    storable(text).encode("utf-8")  # what psycopg sends


@pytest.mark.parametrize("text", STORABLE)
def test_storable_text_passes_unchanged(text: str) -> None:
    assert unstorable(text) is None
    assert storable(text) == text


@given(st.text())
def test_any_text_made_storable_encodes_and_keeps_its_length(text: str) -> None:
    kept = storable(text)
    kept.encode("utf-8")
    assert "\x00" not in kept
    assert len(kept) == len(text)


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 20_000, 50_000])
def test_a_body_nested_too_deep_is_one_line(depth: int) -> None:
    body = json.dumps({"metadata": {"x": "__NEST__"}}).replace('"__NEST__"', _nested(depth))
    refused = body_refusal(body.encode())
    assert refused is not None
    assert "nested deeper than" in refused
    assert "\n" not in refused


def test_a_body_within_the_depth_passes() -> None:
    assert body_refusal(_nested(MAX_JSON_DEPTH).encode()) is None


@pytest.mark.parametrize(
    ("document", "where"),
    [
        ({"input": {"messages": [{"role": "human", "content": "tea\u0000time"}]}}, "content"),
        ({"value": {"text": "Bob\u0000 likes NUL"}}, "$.value.text"),
        ({"metadata": {"ok": ["a", {"deep": "x\ud800"}]}}, "$.metadata.ok[1].deep"),
        ({"metadata": {"k\u0000ey": 1}}, "a key in $.metadata"),
    ],
)
def test_unstorable_text_anywhere_in_a_body_is_refused_with_its_place(
    document: dict[str, object], where: str
) -> None:
    refused = body_refusal(json.dumps(document).encode())
    assert refused is not None
    assert where in refused
    assert json_refusal(document) is not None


def test_an_ordinary_run_body_passes() -> None:
    body = {
        "assistant_id": "agent",
        "input": {"messages": [{"role": "human", "content": [{"type": "text", "text": "hi 😀"}]}]},
        "metadata": {"source": "app"},
    }
    assert body_refusal(json.dumps(body).encode()) is None
    assert body_refusal(b"not json") is None  # the API's own 422


@pytest.mark.parametrize("content", ["tea\x00time", [{"type": "text", "text": "x\ud800"}]])
def test_a_message_the_database_cannot_store_is_refused_at_the_graphs_door(
    content: str | list[dict[str, str]],
) -> None:
    with pytest.raises(UnstorableTextError, match="cannot be stored"):
        check_message(content)
