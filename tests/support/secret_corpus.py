"""Credentials of many shapes, each said inside an ordinary preference sentence, and exact
values a thread needs that must never be taken for one."""

from __future__ import annotations

import pytest

PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM2x8nQkVbT7wL0pR5sY9uZ1cH4eJ6\n"
    "-----END RSA PRIVATE KEY-----"
)
SECRETS: list[tuple[str, str, str]] = [
    (
        "openai",
        "I prefer to keep my OpenAI key {} in the .env file",
        "sk-proj-4fG7hJ2kL9mN3pQ8rS1tV6wX0yZ5aB2cD7eF",
    ),
    (
        "anthropic",
        "I prefer that you use my Anthropic key {} for the tests",
        "sk-ant-api03-Xk3mP9qL2vR7tY5wZ8nB4cF6hJ1gD0sA-aBcDeF",
    ),
    ("aws", "I prefer to keep the AWS access key {} in the vault", "AKIA2E3F4G5H6J7K8L9M"),
    (
        "github",
        "I prefer you use my GitHub token {} for the CI",
        "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
    ),
    (
        "slack",
        "I prefer to post with the Slack bot token {} in the channel",
        "xoxb-2871650423-5736183652-Zc4Wm8PqT2nJ5vX9kL3bR7yH",
    ),
    (
        "stripe",
        "I prefer that you charge with {} in production",
        "sk_live_51HqLyjWDarjtT1zdp7dc4fTnQ3vX8kR2mP9sL",
    ),
    (
        "jwt",
        "I prefer to authenticate with {} for the API",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0"
        ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    ),
    ("pem", "I prefer to deploy with this key {} on the server", PEM),
    ("password-en", "I prefer you remember that my wifi password is {}", "Tr0ub4dor&3xq"),
    ("password-de", "Ich bevorzuge kurze Antworten, mein WLAN-Passwort ist {}", "Kx9#mPq2Lw"),
    ("password-fr", "Je préfère le thé, et mon mot de passe wifi est {}", "Bz7!qRt4Vn"),
    ("password-es", "Prefiero respuestas cortas; mi contraseña del wifi es {}", "Hm3$wQz8Pk"),
    (
        "vault",
        "I prefer to read secrets with the Vault token {} in staging",
        "hvs.CAESIJlWh3kP9xQ2mR7tV5yZ8nB4cF6hJ1gD0sAqWeRtYuIo",
    ),
    (
        "totp",
        "I prefer to set up the authenticator with the TOTP seed {}",
        "JBSW Y3DP EHPK 3PXP JBSW Y3DP EHPK 3PXP",
    ),
]
"""(name, sentence with a slot, the credential)."""

SAID = [
    pytest.param(sentence.format(secret), secret, id=name) for name, sentence, secret in SECRETS
]
"""(what the user says, the credential in it), one test case each."""


def cores(secret: str) -> list[str]:
    """The parts of a credential that must appear nowhere: the whole, and each line or group
    of it long enough to be the credential (a PEM body line, a JWT part), so a partly masked
    value still fails."""
    parts = {secret, *secret.splitlines(), *secret.split(".")}
    return [p for p in parts if len(p) >= 8 and not p.startswith("-----")]


BENIGN: list[tuple[str, str, str]] = [
    ("order", "My order is #884213, it has not arrived", "884213"),
    ("amount", "It cost €1,294.50 in the end", "€1,294.50"),
    ("date", "Please deliver it on 2026-03-14", "2026-03-14"),
    ("commit", "The fix is in commit 3f2a9c1 on main", "3f2a9c1"),
    ("email", "You can mail me at dana.kowalski@example.com", "dana.kowalski@example.com"),
    ("iban", "Refund it to DE89 3704 0044 0532 0130 00 please", "DE89 3704 0044 0532 0130 00"),
    ("card", "I paid with card 4111 1111 1111 1111", "4111 1111 1111 1111"),
]
"""(kind, sentence, the exact value the thread needs pinned)."""
