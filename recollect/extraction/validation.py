"""The one gate every candidate fact passes before it is stored, embedded or logged.

Order matters: injection rules read the raw text (so "send it to a@b.com" is still seen
as a directive), and with the facts just before it (an instruction split in two); credentials
are masked and the fact refused; redaction runs before anything keeps the text; the learned
layer then embeds what is left once, and the store keeps that vector; de-duplication and caps
read the normalised, redacted form. `recollect memory screen` runs
exactly this.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from recollect.gate.injection_classifier import learned_batch
from recollect.gate.normalise import normalised
from recollect.gate.redaction import Rule, compile_patterns, redact
from recollect.gate.screening import (
    SPLIT_WINDOW,
    completes_split_instruction,
    opens_split_instruction,
    ruled_injection,
)
from recollect.gate.secrets import screen_secrets
from recollect.longterm.records import FactCategory
from recollect.store.errors import ConfigurationError

DEFAULT_CATEGORIES: frozenset[FactCategory] = frozenset(
    {
        FactCategory.PREFERENCE,
        FactCategory.BIOGRAPHICAL,
        FactCategory.CONSTRAINT,
        FactCategory.GOAL,
        FactCategory.TECHNICAL_STACK,
    }
)
_PLACEHOLDER = re.compile(r"\[[A-Z_]+\]")
_NOT_WORD = re.compile(r"[^\w\[\]]+")


@dataclass(frozen=True)
class ValidationPolicy:
    """What the operator allows; `from_env` reads the deployment's settings."""

    categories: frozenset[FactCategory] = DEFAULT_CATEGORIES
    max_fact_chars: int = 300
    max_per_category: int = 10
    """Facts accepted per category in one batch (one extraction, or one `screen` input)."""
    extra_patterns: tuple[Rule, ...] = ()
    allow_pii: frozenset[str] = frozenset()
    """PII kinds kept verbatim in long-term memory (e.g. "email" for a CRM deployment)."""

    @classmethod
    def from_env(cls) -> ValidationPolicy:
        """`RECOLLECT_FACT_CATEGORIES`, `RECOLLECT_MAX_FACT_CHARS`,
        `RECOLLECT_MAX_FACTS_PER_CATEGORY`, `RECOLLECT_REDACT_PATTERNS` (a JSON object of
        name → regex) and `RECOLLECT_PII_ALLOW` (comma-separated kinds)."""
        return cls(
            categories=parse_categories(os.environ.get("RECOLLECT_FACT_CATEGORIES", "")),
            max_fact_chars=_positive("RECOLLECT_MAX_FACT_CHARS", 300),
            max_per_category=_positive("RECOLLECT_MAX_FACTS_PER_CATEGORY", 10),
            extra_patterns=compile_patterns(_patterns(os.environ.get("RECOLLECT_REDACT_PATTERNS"))),
            allow_pii=frozenset(
                kind.strip()
                for kind in os.environ.get("RECOLLECT_PII_ALLOW", "").split(",")
                if kind.strip()
            ),
        )


@dataclass(frozen=True)
class Verdict:
    """Whether a candidate may be stored, its redacted text, and every reason that applied."""

    accepted: bool
    text: str
    reasons: tuple[str, ...]
    key: str
    """Normalised form used for de-duplication ("Python" and "python" share one)."""
    embedding: list[float] | None = field(default=None, compare=False, repr=False)
    """The offline e5 vector of `text`, when the learned layer embedded exactly that text to
    judge it: the store keeps it instead of embedding the fact a second time."""

    def as_json(self) -> dict[str, Any]:
        return {"accepted": self.accepted, "text": self.text, "reasons": list(self.reasons)}


@dataclass(frozen=True)
class _Draft:
    """A candidate read by everything but the learned layer, in the order reasons are given."""

    text: str
    ruled: tuple[str, ...]
    after: tuple[str, ...]
    """Reasons after the injection ones: split instructions, secrets, redaction, size, kind."""
    refused: bool


@dataclass
class FactScreen:
    """Validates a batch: remembers what it accepted so duplicates and caps apply across it."""

    policy: ValidationPolicy = field(default_factory=ValidationPolicy)
    known_keys: set[str] = field(default_factory=set)
    """Keys already stored for this user; a candidate matching one is a duplicate."""
    recent: list[str] = field(default_factory=list)
    """The user's latest facts, oldest first; each checked fact joins them (see `SPLIT_WINDOW`)."""
    _per_category: Counter[str] = field(default_factory=Counter, init=False)

    def check(self, text: str, category: str | None = None) -> Verdict:
        """The verdict for one candidate; `category` None skips the allow-list (plain text)."""
        return self.check_batch([(text, category)])[0]

    def check_all(self, texts: Iterable[str]) -> list[Verdict]:
        return self.check_batch([(text, None) for text in texts])

    def check_batch(self, candidates: Sequence[tuple[str, str | None]]) -> list[Verdict]:
        """Verdicts for one extraction's facts, in order. The rules, secrets and redaction read
        every fact first; the facts nothing refused are then embedded once, together, for the
        learned layer (so a secret is never embedded), and that vector is the one stored. A
        fact that begins an instruction a following fact finishes is refused too."""
        texts = [text for text, _ in candidates]
        drafts = [self._draft(text, category) for text, category in candidates]
        judged = [index for index, draft in enumerate(drafts) if not draft.refused]
        learned = learned_batch([texts[i] for i in judged], [drafts[i].text for i in judged])
        layer = dict(zip(judged, learned, strict=True))
        verdicts = []
        for index, ((text, category), draft) in enumerate(zip(candidates, drafts, strict=True)):
            seen = layer.get(index)
            reasons = [*draft.ruled, *(seen.reasons if seen else ()), *draft.after]
            rejected = draft.refused or bool(seen and seen.reasons)
            key = dedup_key(draft.text)
            if not rejected and key in self.known_keys:
                reasons.append("duplicate: already remembered")
                rejected = True
            bucket, cap = category or "", self.policy.max_per_category
            if not rejected and self._per_category[bucket] >= cap:
                reasons.append(f"category cap: more than {cap} in one batch")
                rejected = True
            opened = opens_split_instruction(text, texts[index + 1 : index + 1 + SPLIT_WINDOW])
            reasons += opened
            rejected = rejected or bool(opened)
            if not rejected:
                self.known_keys.add(key)
                self._per_category[bucket] += 1
            vector = seen.vector if seen and not rejected else None
            verdicts.append(
                Verdict(not rejected, draft.text, tuple(dict.fromkeys(reasons)), key, vector)
            )
        return verdicts

    def _draft(self, text: str, category: str | None) -> _Draft:
        """Everything that judges `text` without embedding it."""
        ruled = ruled_injection(text)
        after = self._split_with_recent(text)
        self.recent = [*self.recent, text][-SPLIT_WINDOW:]
        clean, secret_kinds = _without_secrets(normalise(text))
        after += [f"secret: {kind}" for kind in secret_kinds]
        redaction = redact(clean, self.policy.extra_patterns, self.policy.allow_pii)
        after += [f"redacted: {kind}" for kind in redaction.kinds]
        refused = bool(ruled) or any(not r.startswith("redacted") for r in after)
        if not dedup_key(_PLACEHOLDER.sub("", redaction.text)):
            after.append("empty: nothing left to remember")
            refused = True
        if len(redaction.text) > self.policy.max_fact_chars:
            after.append(
                f"too long: {len(redaction.text)} characters, limit {self.policy.max_fact_chars}"
            )
            refused = True
        if category is not None and category not in {c.value for c in self.policy.categories}:
            allowed = ", ".join(sorted(c.value for c in self.policy.categories))
            after.append(f"category not allowed: {category!r} (allowed: {allowed})")
            refused = True
        return _Draft(redaction.text, ruled, tuple(after), refused)

    def _split_with_recent(self, text: str) -> list[str]:
        """Reasons `text` completes an instruction that a recent fact began."""
        return [
            reason
            for earlier in self.recent[-SPLIT_WINDOW:]
            for reason in completes_split_instruction(earlier, text)
        ]


def _without_secrets(text: str) -> tuple[str, tuple[str, ...]]:
    """The text with credentials masked, and their kinds; the decoded reading counts too
    ("my PIN is four eight two one")."""
    return screen_secrets(text)


def normalise(text: str) -> str:
    """Folded Unicode, single spaces, no trailing full stop: the form that is stored."""
    return normalised(text)


def dedup_key(text: str) -> str:
    """Case, punctuation and spacing do not make a fact new."""
    return " ".join(_NOT_WORD.sub(" ", text.casefold()).split())


def parse_categories(raw: str) -> frozenset[FactCategory]:
    """A comma-separated allow-list; an unknown name fails loudly, listing the known ones."""
    names = [name.strip().lower() for name in raw.split(",") if name.strip()]
    if not names:
        return DEFAULT_CATEGORIES
    known = {c.value: c for c in FactCategory}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise ConfigurationError(
            f"RECOLLECT_FACT_CATEGORIES names unknown categories {unknown}; "
            f"known: {', '.join(sorted(known))}"
        )
    return frozenset(known[name] for name in names)


def _positive(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < 1:
        raise ConfigurationError(f"{name} must be a positive whole number, got {raw!r}")
    return int(raw)


def _patterns(raw: str | None) -> dict[str, str]:
    if not raw:
        return {}
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ConfigurationError(f"RECOLLECT_REDACT_PATTERNS must be a JSON object: {exc}") from exc
    if not isinstance(parsed, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in parsed.items()
    ):
        raise ConfigurationError(
            'RECOLLECT_REDACT_PATTERNS must map names to regexes: {"name": "regex"}'
        )
    return parsed
