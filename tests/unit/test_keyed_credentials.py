"""Credentials in every shape a person pastes (provider tokens, connection strings, seed
phrases, recovery codes, TOTP secrets, hex keys, combinations, logins) are refused at write
time; sentences about the same things are kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recollect.extraction.validation import FactScreen

_CASES = [
    json.loads(line)
    for line in (Path(__file__).parents[1] / "data" / "screening" / "credentials_keyed.jsonl")
    .read_text(encoding="utf-8")
    .splitlines()
]


@pytest.fixture(autouse=True)
def _rules_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Secrets are the rules' call; the learned injection layer is not what is tested here."""
    monkeypatch.setenv("RECOLLECT_INJECTION_MODEL", "off")


@pytest.mark.parametrize("text", [c["text"] for c in _CASES if c["secret"]])
def test_a_pasted_credential_is_refused(text: str) -> None:
    verdict = FactScreen().check(text)
    assert not verdict.accepted
    assert [r for r in verdict.reasons if r.startswith("secret: ")]


@pytest.mark.parametrize("text", [c["text"] for c in _CASES if not c["secret"]])
def test_a_sentence_about_credentials_is_kept(text: str) -> None:
    verdict = FactScreen().check(text)
    assert not [r for r in verdict.reasons if r.startswith("secret")]
