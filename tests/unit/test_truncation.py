"""Structure-preserving truncation of oversized tool output."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from recollect.history.tokens import text_tokens
from recollect.history.truncation import truncate_text


def _log(entries: int) -> str:
    rows = [
        {"ts": f"2026-11-29T10:{i % 60:02d}:00Z", "level": "INFO", "msg": f"request {i} ok"}
        for i in range(entries)
    ]
    rows[-1] = {"ts": "2026-11-29T11:00:00Z", "level": "ERROR", "msg": "payment 8842-B failed"}
    return json.dumps({"service": "billing", "entries": rows})


def test_a_short_text_is_returned_unchanged() -> None:
    assert truncate_text("hello", 10) == "hello"


def test_a_large_json_log_stays_valid_json_with_head_tail_and_a_marker() -> None:
    log = _log(900)
    assert text_tokens(log) > 8000
    cut = truncate_text(log, 1000)
    assert text_tokens(cut) <= 1000
    data = json.loads(cut)
    assert data["service"] == "billing"
    assert data["entries"][0]["msg"] == "request 0 ok"  # head kept
    assert data["entries"][-1]["msg"] == "payment 8842-B failed"  # tail kept
    markers = [e for e in data["entries"] if isinstance(e, str)]
    assert markers
    assert "items cut" in markers[0]


def test_plain_text_keeps_head_and_tail_and_says_what_was_cut() -> None:
    text = "START\n" + "line of log output\n" * 2000 + "END: disk full"
    cut = truncate_text(text, 200)
    assert cut.startswith("START")
    assert cut.endswith("END: disk full")
    assert "characters" in cut
    assert "lines) cut" in cut
    assert text_tokens(cut) <= 200 + 20


def test_json_with_one_enormous_string_keeps_its_ends() -> None:
    doc = json.dumps({"output": "A" + "x" * 50_000 + "Z"})
    cut = json.loads(truncate_text(doc, 300))
    assert cut["output"].startswith("A")
    assert cut["output"].endswith("Z")
    assert "characters cut" in cut["output"]


def test_invalid_json_falls_back_to_text() -> None:
    broken = "{" + "x" * 10_000
    cut = truncate_text(broken, 100)
    assert "characters" in cut
    assert len(cut) < 1000


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=400),
    lambda inner: (
        st.lists(inner, max_size=60) | st.dictionaries(st.text(max_size=8), inner, max_size=20)
    ),
    max_leaves=400,
)


@settings(max_examples=100, deadline=None)
@given(json_values.filter(lambda v: isinstance(v, (list, dict))), st.integers(40, 2000))
def test_truncated_json_is_always_valid_and_within_budget(value: object, budget: int) -> None:
    text = json.dumps(value)
    cut = truncate_text(text, budget)
    json.loads(cut)
    assert text_tokens(cut) <= max(budget, 60)
