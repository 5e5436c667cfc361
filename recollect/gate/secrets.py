"""Credentials in a candidate fact: provider keys, tokens, private keys, `key = value`
assignments and long random strings, found by Yelp's `detect-secrets` plugins in-process.

A credential in long-term memory would be put in front of the model in every later session,
recalled into prompts and logs, and embedded; so a fact holding one is refused (and its text,
which the candidate log keeps, carries `[SECRET]` instead of the value). The plugins read the
fact as a line of YAML (so `password: hunter2` and `API_KEY=…` are assignments); their findings
are kept only where a fact is not prose (`my secret: I snore` stays). Long unquoted runs count
when their Shannon entropy passes the plugin's own limit and the library's id, UUID and
sequence filters do not call them harmless; hex runs (commit hashes) count only as assigned
values. The provider shapes `pii_patterns.API_KEY` knows (Google's `AIza…` among them) count
too. Spoken phrasings ("my wifi password is …") are `password_phrases`' job, and
`credential_phrases`' in the languages whose grammar that rule does not read; values that
only their keyword shows to be credentials (seed phrases, recovery codes, logins) are
`keyed_credentials`'.

`mask_secrets` is the one screen every channel that keeps or re-prompts what a user said calls
(fact candidates, pins, the summary fold, traces, the profile, episodes, job errors): the same
findings as the fact screen, the decoded reading included, each replaced by `[SECRET]`. It
runs on every turn, so its verdicts are cached by text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import cache, lru_cache
from typing import Any

from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.filters.heuristic import (
    is_likely_id_string,
    is_potential_uuid,
    is_sequential_string,
    is_templated_secret,
)
from detect_secrets.plugins.base import BasePlugin
from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString

from recollect.gate import credential_phrases, keyed_credentials, password_phrases
from recollect.gate.pii_decoding import decode
from recollect.gate.pii_patterns import API_KEY

__all__ = ["MASK", "Finding", "find_secrets", "has_secret", "mask_secrets", "mask_secrets_in"]

MASK = "[SECRET]"
"""What a credential is replaced by, wherever it would be kept or shown again."""
CACHED_CHARS = 20_000
"""Texts up to this long have their verdict cached (a turn's messages are read again on the
next turn); longer ones, tool output mostly, are screened each time."""

Finding = tuple[int, int, str]
"""(start, end, kind): the span to take out and what the detector called it."""

_ENTROPY_TYPES = {"Base64 High Entropy String", "Hex High Entropy String", "Public IP (ipv4)"}
_KEYWORD = "Secret Keyword"
_GENERIC = {"high_entropy_string", "secret_keyword", "assigned_secret"}
"""Kinds named after how they were found, not what they are: a provider's name wins."""
_AS_FILE = "fact.yaml"
"""Read as YAML, the keyword plugin takes unquoted `key: value` and `KEY=value` assignments."""

_TOKEN_EDGE = re.compile(r"[^\s'\"`,;()<>\[\]{}]+")
_PEM = re.compile(
    r"-----BEGIN [A-Z0-9 ]*(?:PRIVATE KEY|KEY BLOCK)[A-Z ]*-----(?:.*?-----END [A-Z0-9 ]*-----|.*)",
    re.DOTALL,
)
_CONFIG_LINE = re.compile(
    r"^\s*(?:export\s+)?[\"']?(?:[A-Za-z0-9]+[_.-][\w.-]*|[A-Z0-9_]{3,})[\"']?\s*[:=]"
)
_ASSIGNMENT = re.compile(
    r"(?i)(?<![\w.-])[\w.-]*(?:token|secret|passw(?:or)?d|passwort|pwd|api[_-]?key|access[_-]?key|"
    r"private[_-]?key|credentials?|auth(?![a-z]))[\w.-]*[\"']?\s*[:=]\s*[\"']?"
    r"(?P<value>[^\s\"',;}]{6,})"
)
"""`AUTH_TOKEN=…`, `"api_key": "…"`: the names config files give credentials, beyond the
plugin's own keyword list (which has no "token")."""
_RANDOM_RUN = re.compile(r"(?<![\w/+=-])[A-Za-z0-9+/_\-]{24,}={0,2}(?![\w/+=-])")
_LOOKS_MADE_UP = re.compile(r"\d|[^\w\s]|[a-z][A-Z]|_")
_ENTROPY = Base64HighEntropyString(limit=4.5)


@cache
def _plugins() -> tuple[BasePlugin, ...]:
    """Every signature plugin the library ships (entropy ones are applied below, by hand)."""
    mapping: Mapping[str, type[BasePlugin]] = get_mapping_from_secret_type_to_class()
    return tuple(cls() for name, cls in mapping.items() if name not in _ENTROPY_TYPES)


def _token_around(text: str, value: str) -> Iterable[tuple[int, int]]:
    """The whole whitespace-delimited token holding each occurrence of `value`."""
    start = text.find(value)
    while value and start >= 0:
        end = start + len(value)
        left = start
        while left > 0 and _TOKEN_EDGE.fullmatch(text[left - 1]):
            left -= 1
        while end < len(text) and _TOKEN_EDGE.fullmatch(text[end]):
            end += 1
        yield left, end
        start = text.find(value, end)


def _keyword_value_counts(text: str, value: str) -> bool:
    """An assigned value is a credential when quoted, shaped like one (digits, symbols, inner
    capitals), or set on a config line whose key is an identifier (`DB_PASS=`, `api-key:`);
    "Favourite author: Tolkien" is prose."""
    if re.search(rf"['\"`]{re.escape(value)}['\"`]", text):
        return True
    if " " in value.strip():
        return False
    return bool(_LOOKS_MADE_UP.search(value)) or bool(_CONFIG_LINE.match(text))


def _signature_findings(text: str) -> Iterable[Finding]:
    for plugin in _plugins():
        for secret in plugin.analyze_line(filename=_AS_FILE, line=text, line_number=1):
            value = secret.secret_value or ""
            if secret.type == "Private Key":
                continue  # the PEM pattern below takes the whole block
            if secret.type == _KEYWORD and not _keyword_value_counts(text, value):
                continue
            kind = secret.type.lower().replace(" ", "_")
            for start, end in _token_around(text, value.strip()):
                yield start, end, kind


def _assignments(text: str) -> Iterable[Finding]:
    for match in _ASSIGNMENT.finditer(text):
        if _keyword_value_counts(text, match.group("value")):
            yield match.start("value"), match.end("value"), "assigned_secret"


def _random_runs(text: str) -> Iterable[Finding]:
    for match in _RANDOM_RUN.finditer(text):
        run = match.group(0)
        if _ENTROPY.calculate_shannon_entropy(run) <= _ENTROPY.entropy_limit:
            continue
        if is_potential_uuid(run) or is_sequential_string(run) or is_templated_secret(run):
            continue
        if is_likely_id_string(run, text) or not re.search(r"\d", run):
            continue
        yield match.start(), match.end(), "high_entropy_string"


def find_secrets(text: str) -> list[Finding]:
    """Spans of credentials in `text`, leftmost first, overlaps merged into the earlier one."""
    found = [
        *((m.start(), m.end(), "private_key") for m in _PEM.finditer(text)),
        *_signature_findings(text),
        *_assignments(text),
        *((m.start(), m.end(), "api_key") for m in API_KEY.finditer(text)),
        *_random_runs(text),
        *password_phrases.find(text),
        *credential_phrases.find(text),
        *keyed_credentials.find(text),
    ]
    merged: list[Finding] = []
    for start, end, kind in sorted(found, key=lambda f: (f[0], -f[1], f[2] in _GENERIC)):
        if merged and start < merged[-1][1]:
            last = merged[-1]
            merged[-1] = (last[0], max(last[1], end), last[2])
        else:
            merged.append((start, end, kind))
    return merged


def mask(text: str, findings: list[Finding]) -> str:
    """`text` with every finding replaced by `[SECRET]`."""
    for start, end, _kind in reversed(findings):
        text = f"{text[:start]}{MASK}{text[end:]}"
    return text


def screen_secrets(text: str) -> tuple[str, tuple[str, ...]]:
    """`text` with every credential masked, and the kinds found. When the text as written
    holds none, its decoded reading counts too ("my PIN is four eight two one"): then the
    masked decoded text is returned, so the value is gone in either spelling."""
    if not text:
        return text, ()
    if len(text) > CACHED_CHARS:
        return _screen(text)
    return _cached_screen(text)


def mask_secrets(text: str) -> str:
    """`text` with every credential replaced by `[SECRET]`: what every channel keeps."""
    return screen_secrets(text)[0]


def has_secret(text: str) -> bool:
    """Whether `text` holds a credential (cached, so asking before masking costs nothing)."""
    return bool(screen_secrets(text)[1])


def mask_secrets_in(value: Any) -> Any:
    """A JSON-like document (dicts, lists, strings) with `mask_secrets` applied to every
    string in it, keys left as they are."""
    if isinstance(value, str):
        return mask_secrets(value)
    if isinstance(value, Mapping):
        return {key: mask_secrets_in(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [mask_secrets_in(item) for item in value]
    return value


def _screen(text: str) -> tuple[str, tuple[str, ...]]:
    found = find_secrets(text)
    if not found and (decoded := decode(text)) != text and (found := find_secrets(decoded)):
        text = decoded
    return mask(text, found), tuple(dict.fromkeys(kind for *_, kind in found))


@lru_cache(maxsize=2048)
def _cached_screen(text: str) -> tuple[str, tuple[str, ...]]:
    return _screen(text)
