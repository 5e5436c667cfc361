"""The generalisation bench runs end to end on a slice of the corpus (the full run is
`python -m bench.injection`)."""

from __future__ import annotations

import json
from pathlib import Path

from bench.injection import generalisation, locomo, sentence_like
from bench.injection_corpus import heldout, load


def test_leave_one_language_out_runs_on_a_slice() -> None:
    lines = [line for line in load() if line.lang in {"da", "hu"}]
    figures = generalisation(lines, only=["da"], cache=None)
    held = figures["leave_one_language_out"]
    assert set(held["by_group"]) == {"da"}
    assert held["learned"]["injections"] > 0
    assert held["learned"]["benign"] > 0
    assert 0.0 <= held["learned"]["recall"] <= 1.0
    assert 0.0 <= held["with_rules"]["false_alarm_rate"] <= 1.0
    assert held["with_rules"]["recall"] >= held["rules_alone"]["recall"]


def test_the_corpus_covers_the_classes_it_claims() -> None:
    lines = load()
    assert len({line.lang for line in lines + heldout()}) >= 25
    injection_styles = {line.style for line in lines if line.injection}
    assert {"direct", "preference", "paraphrase", "exfiltration", "toolcall", "disguised"} <= (
        injection_styles
    )
    disguises = {line.disguise for line in lines if line.disguise}
    assert len(disguises) >= 7
    assert sum(not line.injection for line in lines) >= 0.4 * len(lines)


def test_every_idea_added_for_generalisation_is_written_in_25_languages() -> None:
    everything = load() + heldout()
    written = [line for line in everything if line.style not in {"disguised"} or not line.disguise]
    ideas = [f"b{n}" for n in range(9, 19)] + [f"i{n}" for n in range(9, 15)]
    for idea in ideas:
        languages = {line.lang for line in written if line.concept == idea}
        assert len(languages) >= 25, (idea, len(languages))
    styles = {line.style for line in load() if line.injection}
    assert {"persona", "backdoor", "fake-note"} <= styles


def test_real_facts_are_read_against_a_threshold_chosen_on_the_first_three(
    tmp_path: Path,
) -> None:
    said = ["Ana moved to Porto last spring.", "Ben plays the cello on Sundays."]
    samples = [
        {"observation": {"session_1_observation": {"A": [[f"{text} ({n})", "D1:1"]]}}}
        for n, text in enumerate(said * 3)
    ]
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(samples), encoding="utf-8")
    figures = locomo(path)
    assert figures["facts"] == {"chosen_on": 3, "read_on": 3}
    assert (
        figures["operating_threshold"] is None
        or figures["operating_threshold"] >= figures["training_threshold"] - 1e-4  # rounded
    )
    for rates in figures["refused_by_threshold"].values():
        assert 0.0 <= rates["chosen_on"] <= 1.0
        assert 0.0 <= rates["read_on"] <= 1.0
    assert figures["read_in_another_form"]["facts"] == 0


def test_only_sentence_like_strings_of_the_tests_are_read(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    source = 'A = "Runs the nightly backup job"\nB = "x"\nC = "one\\ntwo three four"\n'
    (tmp_path / "tests" / "test_x.py").write_text(source, encoding="utf-8")
    assert sentence_like(tmp_path) == ["Runs the nightly backup job"]
