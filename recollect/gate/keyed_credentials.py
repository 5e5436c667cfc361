"""Credentials that look harmless alone and are told apart by the words that introduce them.

Twelve plain words are a wallet's seed phrase after "seed phrase"; `4f2a-9c1e` is a recovery
code after "recovery codes"; sixteen capitals are a TOTP secret after "2FA secret"; a hex run
is a private key after "private key"; `12-34-56` opens a safe after "combination"; `root /
toor123` is a login. Each kind is a keyword, a short stretch, then a value of its own shape.
"""

# ruff: noqa: RUF001  (dashes and quotation marks people type are what these rules read)
from __future__ import annotations

import re
from collections.abc import Iterable

_STRETCH = r"[^.\n]{0,30}?"
"""Words between the keyword and the value: "for GitHub:", "of the old wallet is"."""

_HALF = r"(?=[a-z]*\d)[a-z0-9]{4,6}"
_HYPHENATED = rf"\b{_HALF}-{_HALF}\b"
_CODE = rf"(?:{_HYPHENATED}|\b(?=[a-z]*\d)[a-z0-9]{{8,12}}\b)"
_CODES = rf"(?:{_HYPHENATED}(?:[\s,;]+{_CODE})*|{_CODE}(?:[\s,;]+{_CODE})+)"
"""Recovery codes: letters and digits with a digit among them, hyphenated or several in a row
("Recovery codes are in 1Password" holds none)."""

_GROUPED_BASE32 = r"\b(?=[A-Z2-7 -]*[2-7])[A-Z2-7]{4}(?:[ -][A-Z2-7]{4}){3,15}\b"
"""A TOTP secret as authenticator apps show it, in groups of four ("JBSW Y3DP EHPK 3PXP")."""

_KEYED: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "seed_phrase",
        re.compile(
            rf"(?i)\b(?:seed|recovery|mnemonic|backup|secret)\s+(?:phrase|words)\b{_STRETCH}"
            r"(?P<value>(?:\b[a-z]{3,8}\b[\s,]+){11,23}\b[a-z]{3,8}\b)"
        ),
    ),
    (
        "recovery_code",
        re.compile(
            rf"(?i)\b(?:recovery|backup|2fa|two-factor|scratch)\s+codes?\b{_STRETCH}"
            rf"(?P<value>{_CODES})"
        ),
    ),
    (
        "totp_secret",
        re.compile(
            rf"(?i)\b(?:totp|2fa|otp|mfa|authenticator|two-factor)\s+(?:secret|seed|key)\b"
            rf"{_STRETCH}(?P<value>\b[A-Z2-7]{{16,64}}=*|{_GROUPED_BASE32})"
        ),
    ),
    (
        "private_key",
        re.compile(
            rf"(?i)\b(?:private\s+key|secret\s+key|signing\s+key|token|api\s+key|access\s+key)\b"
            rf"{_STRETCH}(?P<value>\b(?:0x)?[0-9a-f]{{32,}}\b|\b[a-z]{{2,10}}_(?:v\d_)?"
            r"(?=[a-z0-9]*\d)[a-z0-9]{20,}\b)"
        ),
    ),
    (
        "combination",
        re.compile(
            r"(?i)\b(?:combination|(?:disarm|arming|keypad|locker|lock|safe|padlock)\s+code)\b"
            rf"{_STRETCH}(?P<value>\b\d{{1,3}}(?:[\s\-–/]+\d{{1,3}}){{2,5}}\b|\b\d{{4,8}}\b)"
        ),
    ),
    (
        "security_answer",
        re.compile(
            r"(?i)\b(?:security\s+(?:answer|question)|secret\s+answer|memorable\s+word)\b"
            rf"{_STRETCH}\b(?:is|was|:)\s+(?P<value>[\w'’-]+)"
        ),
    ),
    (
        "login",
        re.compile(
            r"(?i)\b(?:login|log-in|credentials|creds|sign-?in|ssh|account|username|user)\b"
            r"[^.\n]{0,40}?(?:\s|^)(?P<user>[\w.@+-]+|\[EMAIL\])\s*/\s*(?P<value>\S{4,64})"
        ),
    ),
    (
        "password",
        re.compile(
            r"(?i)\b(?:password|passwort|pwd|passcode|contraseña|senha|mot\s+de\s+passe)\s+"
            r"(?P<value>(?=\S*\d)(?=\S*[^\W\d_])\S{6,64})"
        ),
    ),
)
_MADE_UP = re.compile(r"\d|[^\w\s]|[a-z][A-Z]")


def find(text: str) -> Iterable[tuple[int, int, str]]:
    """(start, end, kind) of each value a credential keyword introduces."""
    for kind, pattern in _KEYED:
        for match in pattern.finditer(text):
            value = match.group("value").rstrip(".,;:!?)")
            if kind == "login" and not _MADE_UP.search(value):
                continue  # "user / admin" is a role, "root / toor123" a login
            start = match.start("value")
            yield start, start + len(value), kind
