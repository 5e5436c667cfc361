"""The pin corpus scored as the benchmark scores it: values in every class lifted whole,
corrections unpin the old value, benign numbers stay unpinned; for the tuning part and the
held-out part apart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import pins as bench
from tests.support.pin_corpus import BENIGN, CORRECTIONS, VALUES, score


def test_corpus_is_written_from_classes() -> None:
    holdout = [c for c in (*VALUES, *CORRECTIONS) if c.split == "holdout"]
    assert len({c.kind for c in holdout}) >= 60, "the held-out part covers 60 formats"
    assert len({c.lang for c in VALUES}) >= 15
    for cases in (VALUES, CORRECTIONS, BENIGN):
        assert {c.split for c in cases} == {"tune", "holdout"}


@pytest.mark.parametrize(
    ("split", "lifted", "false_pins"), [("tune", 1.0, 0.0), ("holdout", 0.9, 0.05)]
)
def test_values_are_lifted_and_benign_numbers_are_not(
    split: str, lifted: float, false_pins: float
) -> None:
    figures = score(split)
    print(f"\n{split}: lifted {figures['lifted']:.1%}, false pins {figures['false_pin_rate']:.1%}")
    assert figures["lifted"] >= lifted, figures["misses"]
    assert figures["false_pin_rate"] <= false_pins, figures["misses"]


def test_the_benchmark_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    chat = [
        {"conversation": {"session_1": [{"text": "We met in 2019."}, {"text": "Order 8842-B"}]}}
    ]
    data = tmp_path / "chat.json"
    data.write_text(json.dumps(chat))
    result = bench.main(["--repeats", "1", "--data", str(data)])
    assert set(result) == {"corpus", "tune", "holdout", "scan_cost", "locomo"}
    assert result["locomo"] == {"turns": 2, "value_pins": 1, "examples": ["order: 8842-B"]}
    assert "holdout" in capsys.readouterr().out
