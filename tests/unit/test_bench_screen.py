"""`bench.screen` runs and reports the gate's figures per class and language on the held-out
part (the full run, with latency and the peer, is `python -m bench.screen`)."""

from __future__ import annotations

import json
from pathlib import Path

from bench import screen as bench_screen


def test_held_out_figures_are_reported_per_class_and_language() -> None:
    holdout = bench_screen.quality(bench_screen._check, splits=("holdout",))["holdout"]
    assert holdout["pii_stored"] == 0
    assert holdout["secrets_stored"] == 0
    assert holdout["benign_false_alarm_rate"] <= 0.02
    assert {"pt", "it", "nl"} <= set(holdout["secret_refusal_by_lang"])
    assert set(holdout["split_both_halves_refused_by_lang"]) >= {"fr", "es", "it", "pt"}
    assert "benign_neighbour_false_alarm_rate" in holdout


def test_conversation_turns_count_secret_and_decoded_alarms(tmp_path: Path) -> None:
    turns = ["Good to see you!", "My Gmail password is hunter2x!", "Mail ana%40example.com"]
    sample = {"conversation": {"session_1": [{"speaker": "A", "text": t} for t in turns]}}
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([sample]), encoding="utf-8")
    assert bench_screen.conversation_turns(path) == {
        "turns": 3,
        "secret_refusals": 1,
        "decoded_redactions": 1,
    }
