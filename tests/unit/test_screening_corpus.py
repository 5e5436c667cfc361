"""The screening corpus scored the way the gate is judged: no raw PII survives, injection
recall at least 0.97, at most 2% of benign look-alikes rejected or altered; reported separately
for the tuning part and the held-out part."""

from __future__ import annotations

import pytest

from tests.support.screening_corpus import BENIGN, INJECTIONS, PII, score


def test_corpus_is_written_from_classes() -> None:
    assert len(PII) >= 150
    assert len(INJECTIONS) >= 100
    assert len(BENIGN) >= 100
    assert len({c.lang for c in INJECTIONS}) >= 6
    assert len({c.style for c in INJECTIONS} - {"plain"}) >= 5
    assert len({c.kind for c in PII}) >= 12
    for cases in (PII, INJECTIONS, BENIGN):
        assert {c.split for c in cases} == {"tune", "holdout"}
    assert all(c.raw for c in PII)


@pytest.mark.parametrize("split", ["tune", "holdout"])
def test_gate_on_each_split(split: str) -> None:
    figures = score(split)
    print(f"\n{split}: {figures.as_json()}")
    assert figures.pii_leaked == []
    assert figures.recall >= 0.97, figures.injections_missed
    assert figures.false_alarm_rate <= 0.02, figures.benign_altered
