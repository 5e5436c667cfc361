"""Passwords and PINs said in words, in languages whose grammar the first phrasing rule does
not read, are refused at write time; talk about passwords in the same languages is not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recollect.extraction.validation import FactScreen

_CASES = [
    json.loads(line)
    for line in (Path(__file__).parents[1] / "data" / "screening" / "credentials_world.jsonl")
    .read_text(encoding="utf-8")
    .splitlines()
]


@pytest.fixture(autouse=True)
def _rules_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Secrets are the rules' call; the learned injection layer is not what is tested here."""
    monkeypatch.setenv("RECOLLECT_INJECTION_MODEL", "off")


@pytest.mark.parametrize(
    "case", [c for c in _CASES if c["secret"]], ids=lambda c: f"{c['split']}-{c['lang']}"
)
def test_a_spoken_credential_is_refused(case: dict[str, object]) -> None:
    verdict = FactScreen().check(str(case["text"]))
    assert not verdict.accepted
    assert "secret: password" in verdict.reasons


@pytest.mark.parametrize(
    "case", [c for c in _CASES if not c["secret"]], ids=lambda c: f"{c['split']}-{c['lang']}"
)
def test_talk_about_passwords_is_kept(case: dict[str, object]) -> None:
    verdict = FactScreen().check(str(case["text"]))
    assert not [r for r in verdict.reasons if r.startswith("secret")]


def test_the_corpus_spans_many_languages() -> None:
    assert len({c["lang"] for c in _CASES}) >= 25
