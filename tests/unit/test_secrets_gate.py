"""Credentials never reach memory: each generated secret (provider key formats, PEM blocks,
config assignments, password phrasings in seven languages) is refused with its value masked,
and the look-alikes (commit hashes, UUIDs, order numbers, talk about passwords) are kept."""

from __future__ import annotations

import pytest

from recollect.extraction.validation import FactScreen
from tests.support.screening_corpus import BENIGN, SECRETS, kept_unchanged, leaked

REPORTED = [
    "My Stripe key is sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "Token eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "-----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXktdjEAAAAABG5vbmU -----END OPENSSH "
    "PRIVATE KEY-----",
    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "Our GitLab token is glpat-9zQxR4vT2mWnB7kLp3Ys",
    "My Gmail password is hunter2x!",
    "The wifi password is bluebird",
    "My card PIN is 4821",
    "My PIN is four eight two one",
    "wifi pw is Sunny2024",
    "Her API token is 8f14e45fceea167a5a36dedd4bea2543",
]


@pytest.mark.parametrize(
    "text",
    [
        "Tokens are 4 per request",
        "The token is valid for 30 days",
        "My API key is in the vault",
        "The PIN is 4 digits long",
        "Uses JWT tokens for auth",
    ],
)
def test_talk_about_credentials_is_kept(text: str) -> None:
    verdict = FactScreen().check(text)
    assert verdict.accepted
    assert verdict.text == text


@pytest.mark.parametrize("text", REPORTED)
def test_reported_secrets_are_refused(text: str) -> None:
    verdict = FactScreen().check(text)
    assert not verdict.accepted
    assert any(reason.startswith("secret: ") for reason in verdict.reasons)
    assert "[SECRET]" in verdict.text


def test_every_generated_secret_is_refused_and_masked() -> None:
    stored = []
    for case in SECRETS:
        verdict = FactScreen().check(case.text)
        if verdict.accepted or leaked(case, verdict.text):
            stored.append(case.text)
    assert stored == []


def test_look_alikes_are_kept_as_written() -> None:
    lookalikes = [case for case in BENIGN if case.kind.startswith("secret_lookalike")]
    verdicts = [(case, FactScreen().check(case.text)) for case in lookalikes]
    altered = [c.text for c, v in verdicts if not kept_unchanged(c, v.accepted, v.text)]
    assert altered == []


def test_allow_listing_pii_never_lets_a_secret_through() -> None:
    from recollect.extraction.validation import ValidationPolicy

    policy = ValidationPolicy(allow_pii=frozenset({"api_key", "secret", "password"}))
    verdict = FactScreen(policy).check("My Stripe key is sk_live_4eC39HqLyjWDarjtT1zdp7dc")
    assert not verdict.accepted
