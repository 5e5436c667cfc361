"""PII redaction: personal values are replaced by a `[KIND]` placeholder before a candidate
fact is stored, embedded or logged.

Detectors live beside this file, one job each: `pii_patterns` (emails, spelled-out emails,
cards, IBANs, API keys, street addresses), `national_ids` and `dated_ids` (ids with their check
digits or birth dates), `phones` (international formats through libphonenumber's metadata),
`quasi_ids` (a postcode with a birth date). Every detector reads the text with earlier
placeholders already in, so a value is taken once, by the most specific kind. Numbers a
checksum would take but the words before call an order, ticket or version stay. The text is
also read decoded (`pii_decoding`: entities, spelled `at`/`dot`, numbers in words, …), and that
reading wins when it shows more values.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from recollect.gate import dated_ids, national_ids, pii_patterns, quasi_ids
from recollect.gate.checksums import iban_valid, luhn_valid
from recollect.gate.phones import CANDIDATE as PHONE_CANDIDATE
from recollect.gate.phones import phone
from recollect.gate.pii_decoding import decode
from recollect.gate.script_seams import SEAM, add_seams, close_seams, open_seams
from recollect.store.errors import ConfigurationError

__all__ = ["Redaction", "Rule", "compile_patterns", "iban_valid", "luhn_valid", "redact"]

Finder = Callable[[str], Iterable[tuple[int, int, str]]]
Rule = tuple[str, Finder]
"""A kind's name (what `allow` lists) and a function giving (start, end, kind) spans."""


@dataclass(frozen=True)
class Redaction:
    """The text with placeholders, and the kinds of value that were taken out."""

    text: str
    kinds: tuple[str, ...]

    @property
    def changed(self) -> bool:
        return bool(self.kinds)


def _matches(pattern: re.Pattern[str], classify: Callable[[re.Match[str]], str | None]) -> Finder:
    def find(text: str) -> Iterable[tuple[int, int, str]]:
        for match in pattern.finditer(text):
            if (kind := classify(match)) is not None:
                yield match.start(), match.end(), kind

    return find


def _kind(name: str) -> Callable[[re.Match[str]], str]:
    return lambda _match: name


def _passports(text: str) -> Iterable[tuple[int, int, str]]:
    return [
        (m.start("value"), m.end("value"), "passport")
        for m in national_ids.PASSPORT.finditer(text)
        if national_ids.passport(m)
    ]


def _ibans(text: str) -> Iterable[tuple[int, int, str]]:
    return [(start, end, "iban") for start, end in pii_patterns.find_ibans(text)]


BUILTIN_RULES: tuple[Rule, ...] = (
    ("email", _matches(pii_patterns.EMAIL, _kind("email"))),
    ("email", _matches(pii_patterns.SPELLED_EMAIL, _kind("email"))),
    ("email", _matches(pii_patterns.EMAIL_AT_DOMAIN, pii_patterns.email_at_domain)),
    ("api_key", _matches(pii_patterns.API_KEY, _kind("api_key"))),
    ("iban", _ibans),
    ("national_id", _passports),
    *(("national_id", _matches(p, classify)) for p, classify in national_ids.DETECTORS[:4]),
    *(("national_id", _matches(p, classify)) for p, classify in dated_ids.DETECTORS),
    ("card", _matches(pii_patterns.CARD, pii_patterns.card)),
    *(("national_id", _matches(p, classify)) for p, classify in national_ids.DETECTORS[4:]),
    ("phone", _matches(PHONE_CANDIDATE, phone)),
    ("address", _matches(pii_patterns.ADDRESS, _kind("address"))),
    (
        "address",
        lambda text: [(s, e, "address") for s, e in pii_patterns.find_named_addresses(text)],
    ),
    ("quasi_id", quasi_ids.find),
)
"""Order matters: checksummed and lettered shapes go before the looser phone candidates."""


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
        rules.append((name, _matches(compiled, _kind(name))))
    return tuple(rules)


def _allowed(kind: str, allow: frozenset[str]) -> bool:
    national = national_ids.KINDS | dated_ids.KINDS
    return kind in allow or ("national_id" in allow and kind in national)


def redact(text: str, extra: Iterable[Rule] = (), allow: frozenset[str] = frozenset()) -> Redaction:
    """Replace every value a rule finds, except kinds the operator allow-listed; when the
    decoded text (`pii_decoding`) gives more placeholders, that reading is the one kept.
    The text is read with seams between letters of scripts written without spaces and the
    values glued to them (`script_seams`), so every detector's boundary holds there."""
    extra = tuple(extra)
    if SEAM in text:  # the mark is the user's own: read the text as written
        return _read(text, extra, allow, seam=lambda t: t)
    found = _read(open_seams(text), extra, allow, seam=add_seams)
    return Redaction(close_seams(found.text), found.kinds)


def _read(
    text: str, extra: tuple[Rule, ...], allow: frozenset[str], seam: Callable[[str], str]
) -> Redaction:
    """The text as given, or decoded (with seams where decoding made new ones) when that
    reading shows more."""
    plain = _redact(text, extra, allow)
    decoded = decode(text)
    if decoded == text:
        return plain
    reread = _redact(seam(decoded), extra, allow)
    return reread if len(reread.kinds) and _count(reread) > _count(plain) else plain


def _count(redaction: Redaction) -> int:
    return len(_PLACEHOLDER.findall(redaction.text))


_PLACEHOLDER = re.compile(r"\[[A-Z_]+\]")


def _redact(text: str, extra: Iterable[Rule], allow: frozenset[str]) -> Redaction:
    kinds: list[str] = []
    for name, find in (*BUILTIN_RULES, *extra):
        if name in allow:
            continue
        pieces: list[str] = []
        last = 0
        for start, end, kind in find(text):
            if start < last or _allowed(kind, allow):
                continue
            pieces += [text[last:start], f"[{kind.upper()}]"]
            kinds.append(kind)
            last = end
        if pieces:
            text = "".join(pieces) + text[last:]
    return Redaction(text, tuple(dict.fromkeys(kinds)))
