"""The screening corpus scored the way the gate is judged: no raw PII survives and no secret is
stored, injection recall at least 0.97, both halves of a split instruction refused, at most 2%
of benign look-alikes (alone or as neighbours) rejected or altered; reported separately for the
tuning part and the held-out part."""

from __future__ import annotations

import pytest

from tests.support.screening_corpus import BENIGN, INJECTIONS, PII, SECRETS, SPLITS, score


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
    assert figures.secrets_stored == []
    assert figures.splits_missed == []
    assert figures.pair_false_alarm_rate <= 0.02, figures.pairs_refused


def test_generated_corpus_is_written_from_classes() -> None:
    assert len(SECRETS) >= 150
    assert {c.kind for c in SECRETS} >= {"provider_key", "private_key", "assignment", "phrase"}
    assert {c.lang for c in SECRETS if c.kind == "phrase"} >= {"en", "de", "fr", "es", "pt", "it"}
    assert len({c.style for c in SECRETS if c.kind == "assignment"}) >= 6
    assert sum(c.kind.startswith("secret_lookalike") for c in BENIGN) >= 25
    assert any(p.injection for p in SPLITS)
    assert not all(p.injection for p in SPLITS)
    for cases in (SECRETS, SPLITS):
        assert {c.split for c in cases} == {"tune", "holdout"}
