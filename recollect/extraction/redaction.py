"""PII redaction: personal values are replaced by a `[KIND]` placeholder before a candidate
fact is stored, embedded or logged.

Numbers are only called card numbers or IBANs when their checksum holds (Luhn, ISO 7064
mod 97), and phone-shaped numbers right after "version", "build" or "v" are left alone, so
look-alikes such as version strings survive.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from recollect.store.errors import ConfigurationError

EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")
SSN = re.compile(r"\b(?!000|666|9\d\d)\d{3}([- ])(?!00)\d{2}\1(?!0000)\d{4}\b")
SSN_UNFORMATTED = re.compile(
    r"(?i)\b(?:ssn|social\s+security(?:\s+(?:number|no\.?|#))?)\s*(?:is|:|#)?\s*(\d{9})\b"
)
CARD = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])")
IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b")
PHONE = re.compile(
    r"(?<![\w.+-])(?:"
    r"\+\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]?\d{2,4}){1,4}"  # international
    r"|\(\d{3}\)\s?\d{3}[ .-]?\d{4}"  # (555) 123-4567
    r"|\d{3}([ .-])\d{3}\1\d{4}"  # 555-123-4567, 555.123.4567
    r"|0\d{2,4}[ -]\d{3,4}[ -]?\d{3,4}"  # national trunk prefix: 020 7946 0958
    r")(?![\w.-]*\d)"
)
API_KEY = re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_-]{20,}\b|\bAKIA[0-9A-Z]{16}\b")
VERSION_CONTEXT = re.compile(r"(?i)(?:\bv|\bversion|\bbuild|\brelease|\bver\.?)\s*$")


@dataclass(frozen=True)
class Redaction:
    """The text with placeholders, and the kinds of value that were taken out."""

    text: str
    kinds: tuple[str, ...]

    @property
    def changed(self) -> bool:
        return bool(self.kinds)


def luhn_valid(digits: str) -> bool:
    """Card-number checksum: doubling every second digit from the right sums to 0 mod 10."""
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2 == 1:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def iban_valid(candidate: str) -> bool:
    """ISO 13616: move the first four characters to the end, letters to numbers, mod 97 == 1."""
    compact = candidate.replace(" ", "").upper()
    if not 15 <= len(compact) <= 34:
        return False
    rearranged = compact[4:] + compact[:4]
    numeric = "".join(str(int(char, 36)) for char in rearranged)
    return int(numeric) % 97 == 1


def _card(match: re.Match[str]) -> bool:
    digits = re.sub(r"\D", "", match.group(0))
    return 13 <= len(digits) <= 19 and luhn_valid(digits)


def _phone(match: re.Match[str]) -> bool:
    before = match.string[max(0, match.start() - 12) : match.start()]
    digits = re.sub(r"\D", "", match.group(0))
    return 7 <= len(digits) <= 15 and not VERSION_CONTEXT.search(before)


def _always(_match: re.Match[str]) -> bool:
    return True


Rule = tuple[str, re.Pattern[str], Callable[[re.Match[str]], bool]]

BUILTIN_RULES: tuple[Rule, ...] = (
    ("email", EMAIL, _always),
    ("api_key", API_KEY, _always),
    ("iban", IBAN, lambda m: iban_valid(m.group(0))),
    ("card", CARD, _card),
    ("ssn", SSN, _always),
    ("ssn", SSN_UNFORMATTED, _always),
    ("phone", PHONE, _phone),
)
"""Order matters: longer, checksummed shapes go before the looser phone pattern."""


def compile_patterns(patterns: Mapping[str, str]) -> tuple[Rule, ...]:
    """Operator-added patterns (`name -> regex`); a bad regex fails loudly, naming the rule."""
    rules: list[Rule] = []
    for name, source in patterns.items():
        try:
            compiled = re.compile(source)
        except re.error as exc:
            raise ConfigurationError(
                f"redaction pattern {name!r} is not a valid regex: {exc}"
            ) from exc
        rules.append((name, compiled, _always))
    return tuple(rules)


def redact(text: str, extra: Iterable[Rule] = (), allow: frozenset[str] = frozenset()) -> Redaction:
    """Replace every value a rule matches, except kinds the operator allow-listed."""
    kinds: list[str] = []
    for name, pattern, accept in (*BUILTIN_RULES, *extra):
        if name in allow:
            continue

        def substitute(
            match: re.Match[str], name: str = name, accept: Callable[..., bool] = accept
        ) -> str:
            if not accept(match):
                return match.group(0)
            kinds.append(name)
            return f"[{name.upper()}]"

        text = pattern.sub(substitute, text)
    return Redaction(text, tuple(dict.fromkeys(kinds)))
