"""The pure parts of traces: `--find`'s story over every kind of event, the recall hit-rate
rule, the bounded collector, and `--since`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from recollect.cli.trace import since_moment
from recollect.store.errors import RecollectError
from recollect.trace.collector import TurnCollector
from recollect.trace.find import story
from recollect.trace.metrics import summarise, used_items
from recollect.trace.store import TraceRow

AT = datetime(2026, 1, 1, tzinfo=UTC)


def _row(turn: int, trace: dict[str, Any], kind: str = "turn") -> TraceRow:
    return TraceRow("t", turn, kind, 1000 * turn, AT, trace)


def _candidate(fact_id: str, text: str, *, kept: bool, dropped: str | None) -> dict[str, Any]:
    return {"id": fact_id, "kind": "fact", "text": text, "dense_rank": 2, "lexical_rank": None,
            "score": 0.5, "kept": kept, "dropped": dropped}  # fmt: skip


ROWS = [
    _row(1, {"user_message": {"id": "h1", "text": "My badge is BX-77"}, "history_ids": ["h1"],
             "pinned": {"shown": [{"kind": "code", "value": "BX-77"}], "hidden": []}}),
    _row(1, {"facts": [{"text": "Badge is BX-77", "verdict": "review", "fact_id": None,
                        "sources": ["h1"], "superseded": [],
                        "reasons": ["low confidence: 0.50 < 0.70"]}]}, "extraction"),
    _row(2, {"user_message": {"id": "h2", "text": "hi"}, "trimmed": ["h1"],
             "fold": {"version": 2, "folded_ids": ["h1"], "text": "nothing", "how": "model"},
             "pinned": {"shown": [], "hidden": [{"kind": "code", "value": "bx-77"}]}}),
    _row(3, {"user_message": {"id": "h3", "text": "badge?"}, "recalled_shown": [],
             "recall": [_candidate("f1", "Badge is BX-77", kept=False, dropped="budget")]}),
    _row(4, {"user_message": {"id": "h4", "text": "hello"}}),
]  # fmt: skip


def test_the_story_follows_a_value_through_every_stage_and_names_where_it_stopped() -> None:
    found = story(ROWS, [{"id": "f1", "text": "Badge is BX-77", "deleted_at": None,
                          "superseded_by": None}], "bx-77")  # fmt: skip
    events = {(t["kind"], t["turn"]): t["events"] for t in found["turns"]}
    assert events[("turn", 1)] == [
        "said by the user",
        "shown: in the prompt's verbatim history",
        "shown: pinned as code (shown)",
    ]
    assert events[("extraction", 1)] == ["extracted: review (low confidence: 0.50 < 0.70)"]
    assert events[("turn", 2)] == [
        "trimmed from the checkpointed window",
        "folded into summary version 2 (lost in its text)",
        "pinned as code (hidden)",
    ]
    assert events[("turn", 3)] == [
        "recalled fact f1 (dense #2, lexical #None, score 0.500), not shown: budget"
    ]
    assert ("turn", 4) not in events
    assert found["stages"]["shown"] == {"first_turn": 1, "last_turn": 1}
    assert found["stages"]["recalled"] == {"first_turn": 3, "last_turn": 3}
    ending = "stored and live; not shown at the last turn (4); last shown at turn 1"
    assert found["stopped"] == ending


@pytest.mark.parametrize(
    ("facts", "stopped"),
    [
        ([], "extracted but never stored (see the verdicts); last shown at turn 1"),
        ([{"id": "f1", "text": "x", "deleted_at": AT, "superseded_by": None}],
         "stored, but no longer live (deleted); last shown at turn 1"),
        ([{"id": "f1", "text": "x", "deleted_at": None, "superseded_by": "f2"}],
         "stored, but no longer live (superseded by f2); last shown at turn 1"),
    ],
)  # fmt: skip
def test_where_the_trail_ends_is_named_for_each_fate(
    facts: list[dict[str, Any]], stopped: str
) -> None:
    assert story(ROWS, facts, "BX-77")["stopped"] == stopped


def test_a_value_never_said_and_never_stored_says_so() -> None:
    assert story(ROWS, [], "nowhere")["stopped"] == (
        "never said in this thread and not in the user's memory"
    )
    assert story(ROWS, [], "%")["turns"] == [], "no pattern syntax: '%' is just a character"


def test_recall_use_is_a_cited_id_or_half_the_content_words() -> None:
    items = [
        ("01a22f97-d2b3-75de-a78c-3eae602dd24b", "Prefers green tea with oat milk"),
        ("01a22f97-d290-777c-98aa-9a8c9ed5d77d", "Works on the billing service in Rust"),
        ("01a22f97-d2a1-7000-8000-00000000cafe", "Has a cat called Miso"),
    ]
    reply = "You like green tea (with oat milk). As [m:9ed5d77d] says, you work on billing."
    assert used_items(reply, items) == [
        "01a22f97-d2b3-75de-a78c-3eae602dd24b",
        "01a22f97-d290-777c-98aa-9a8c9ed5d77d",
    ]
    assert used_items("The cat sat.", items) == [], "one shared word of three is not use"
    assert used_items("see 01a22f97", items) == [], "an id's time-ordered head is no citation"


def test_stats_count_hits_verdicts_and_checkpoint_bytes() -> None:
    rows = [
        _row(1, {"tokens": {"history": 10}, "metrics": {"recalled_shown": ["a", "b"],
                                                       "recalled_used": ["a"]}}),
        _row(2, {"tokens": {"history": 30}, "metrics": {"recalled_shown": ["a"],
                                                       "recalled_used": []}}),
        _row(2, {"facts": [{"verdict": "stored"}, {"verdict": "rejected"},
                           {"verdict": "superseded"}, {"verdict": "review"}]}, "extraction"),
    ]  # fmt: skip
    figures = summarise(rows, {"review_queue": 1, "supersessions": 1})
    assert figures["turns"] == 2
    assert figures["history_tokens_p50"] == 20
    assert figures["recall_hit_rate"] == round(1 / 3, 3)
    assert figures["extraction_yield"] == 0.5
    assert figures["rejection_rate"] == 0.25
    assert figures["checkpoint_bytes_per_thread_max"] == 2000


def test_the_collector_is_bounded_and_a_retried_turn_starts_over() -> None:
    collector = TurnCollector(max_open=3)
    for i in range(5):
        collector.start(("t", f"h{i}"), {"recall": [i]})
    assert len(collector) == 3
    assert collector.take(("t", "h0")) is None, "the oldest open turns are evicted"
    collector.add(("t", "h4"), {"trimmed": ["x"]})
    collector.start(("t", "h4"), {"recall": []})
    assert collector.take(("t", "h4")) == {"recall": []}
    assert collector.take(("t", "h4")) is None


def test_since_takes_durations_and_dates_and_refuses_the_rest() -> None:
    now = datetime(2026, 3, 10, 12, tzinfo=UTC)
    assert since_moment("30m", now) == now - timedelta(minutes=30)
    assert since_moment("7d", now) == now - timedelta(days=7)
    assert since_moment("2026-03-01", now) == datetime(2026, 3, 1, tzinfo=UTC)
    for bad in ("yesterday", "7w", "-1d", "", "9999999d"):
        with pytest.raises(RecollectError, match="--since takes a duration"):
            since_moment(bad, now)
