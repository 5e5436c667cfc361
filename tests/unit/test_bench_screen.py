"""`bench.screen` runs and reports the gate's figures per class and language on the held-out
part (the full run, with latency and the peer, is `python -m bench.screen`)."""

from __future__ import annotations

from bench import screen as bench_screen


def test_held_out_figures_are_reported_per_class_and_language() -> None:
    holdout = bench_screen.quality(bench_screen._check, splits=("holdout",))["holdout"]
    assert holdout["pii_stored"] == 0
    assert holdout["secrets_stored"] == 0
    assert holdout["benign_false_alarm_rate"] <= 0.02
    assert {"pt", "it", "nl"} <= set(holdout["secret_refusal_by_lang"])
    assert set(holdout["split_both_halves_refused_by_lang"]) >= {"fr", "es", "it", "pt"}
    assert "benign_neighbour_false_alarm_rate" in holdout
