"""The generalisation bench runs end to end on a slice of the corpus (the full run is
`python -m bench.injection`)."""

from __future__ import annotations

from bench.injection import generalisation
from bench.injection_corpus import load


def test_leave_one_language_out_runs_on_a_slice() -> None:
    lines = [line for line in load() if line.lang in {"sw", "tl"}]
    figures = generalisation(lines, only=["sw"], cache=None)
    held = figures["leave_one_language_out"]
    assert set(held["by_group"]) == {"sw"}
    assert held["learned"]["injections"] > 0
    assert held["learned"]["benign"] > 0
    assert 0.0 <= held["learned"]["recall"] <= 1.0
    assert 0.0 <= held["with_rules"]["false_alarm_rate"] <= 1.0
    assert held["with_rules"]["recall"] >= held["rules_alone"]["recall"]


def test_the_corpus_covers_the_classes_it_claims() -> None:
    lines = load()
    assert len({line.lang for line in lines}) >= 25
    injection_styles = {line.style for line in lines if line.injection}
    assert {"direct", "preference", "paraphrase", "exfiltration", "toolcall", "disguised"} <= (
        injection_styles
    )
    disguises = {line.disguise for line in lines if line.disguise}
    assert len(disguises) == 7
    assert sum(not line.injection for line in lines) >= 0.4 * len(lines)
