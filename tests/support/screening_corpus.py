"""The screening corpus in `tests/data/screening/`: written from classes (formats, languages,
obfuscation styles, benign look-alikes), each line tagged `tune` or `holdout` (by a hash of its
text, or, in the generated `gen_*` files, by whole styles and languages), so figures can be
reported on the part the rules were not adjusted on."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent.parent / "data" / "screening"


@dataclass(frozen=True)
class Case:
    """One labelled candidate fact; `raw` are the values that must not survive (PII only)."""

    text: str
    kind: str
    split: str
    lang: str
    style: str
    raw: tuple[str, ...] = field(default=())
    label: str | None = None
    """The placeholder kind expected (national ids: what they are, never a phone)."""


def _load(name: str) -> tuple[Case, ...]:
    rows: list[dict[str, Any]] = [
        json.loads(line)
        for line in (DATA / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    return tuple(
        Case(
            text=row["text"],
            kind=row["class"],
            split=row["split"],
            lang=row["lang"],
            style=row.get("style") or row.get("variant") or "plain",
            raw=tuple(row.get("raw", ())),
            label=row.get("label"),
        )
        for row in rows
    )


PII = _load("pii") + _load("gen_pii")
INJECTIONS = _load("injections")
BENIGN = _load("benign") + _load("gen_benign")
SECRETS = _load("gen_secrets")
"""Credentials: refused, and `raw` (the value) absent from the text the candidate log keeps."""


@dataclass(frozen=True)
class Pair:
    """Two neighbouring facts of one batch; `injection` when together they instruct."""

    first: str
    second: str
    kind: str
    split: str
    lang: str
    injection: bool


SPLITS = tuple(
    Pair(row["first"], row["second"], row["class"], row["split"], row["lang"], row["injection"])
    for row in map(json.loads, (DATA / "gen_splits.jsonl").read_text("utf-8").splitlines())
)


def leaked(case: Case, stored_text: str) -> list[str]:
    """Raw values (as written, or in their canonical form) still present in `stored_text`."""
    from recollect.gate.normalise import canonical

    return [raw for raw in case.raw if raw in stored_text or canonical(raw) in stored_text]


def kept_unchanged(case: Case, accepted: bool, stored_text: str) -> bool:
    """A benign fact is kept as written (in its stored, normalised form)."""
    from recollect.extraction.validation import normalise

    return accepted and stored_text == normalise(case.text)


@dataclass
class Figures:
    """What the gate did with one split of the corpus."""

    pii: int = 0
    pii_leaked: list[str] = field(default_factory=list)
    injections: int = 0
    injections_missed: list[str] = field(default_factory=list)
    benign: int = 0
    benign_altered: list[str] = field(default_factory=list)
    secrets: int = 0
    secrets_stored: list[str] = field(default_factory=list)
    splits: int = 0
    splits_missed: list[str] = field(default_factory=list)
    pairs: int = 0
    pairs_refused: list[str] = field(default_factory=list)
    """Benign neighbours (every two adjacent benign lines, and the generated pairs)."""

    @property
    def pair_false_alarm_rate(self) -> float:
        return len(self.pairs_refused) / self.pairs if self.pairs else 0.0

    @property
    def recall(self) -> float:
        return 1 - len(self.injections_missed) / self.injections if self.injections else 1.0

    @property
    def false_alarm_rate(self) -> float:
        return len(self.benign_altered) / self.benign if self.benign else 0.0

    def as_json(self) -> dict[str, Any]:
        return {
            "pii": self.pii,
            "pii_leaked": len(self.pii_leaked),
            "injections": self.injections,
            "injection_recall": round(self.recall, 4),
            "benign": self.benign,
            "benign_false_alarm_rate": round(self.false_alarm_rate, 4),
            "secrets": self.secrets,
            "secrets_stored": len(self.secrets_stored),
            "split_injections": self.splits,
            "split_halves_accepted": len(self.splits_missed),
            "benign_pairs": self.pairs,
            "benign_pair_false_alarm_rate": round(self.pair_false_alarm_rate, 4),
            "misses": self.pii_leaked
            + self.injections_missed
            + self.benign_altered
            + self.secrets_stored
            + self.splits_missed
            + self.pairs_refused,
        }


def score(split: str | None = None) -> Figures:
    """Each case through a fresh `FactScreen` (one fact judged alone); `split` None = all."""
    from recollect.extraction.validation import FactScreen

    figures = Figures()
    for case in PII:
        if split in (None, case.split):
            figures.pii += 1
            if leaked(case, FactScreen().check(case.text).text):
                figures.pii_leaked.append(case.text)
    for case in INJECTIONS:
        if split in (None, case.split):
            figures.injections += 1
            if FactScreen().check(case.text).accepted:
                figures.injections_missed.append(case.text)
    for case in BENIGN:
        if split in (None, case.split):
            figures.benign += 1
            verdict = FactScreen().check(case.text)
            if not kept_unchanged(case, verdict.accepted, verdict.text):
                figures.benign_altered.append(case.text)
    for case in SECRETS:
        if split in (None, case.split):
            figures.secrets += 1
            verdict = FactScreen().check(case.text)
            if verdict.accepted or leaked(case, verdict.text):
                figures.secrets_stored.append(case.text)
    for pair in SPLITS:
        if split in (None, pair.split):
            first, second = FactScreen().check_batch([(pair.first, None), (pair.second, None)])
            if pair.injection:
                figures.splits += 1
                figures.splits_missed += [f"{pair.first} | {pair.second}"] * (
                    first.accepted + second.accepted
                )
            else:
                figures.pairs += 1
                if not (first.accepted and second.accepted):
                    figures.pairs_refused.append(f"{pair.first} | {pair.second}")
    benign = [case.text for case in BENIGN if split in (None, case.split)]
    for earlier, later in itertools.pairwise(benign):
        figures.pairs += 1
        if not all(v.accepted for v in FactScreen().check_batch([(earlier, None), (later, None)])):
            figures.pairs_refused.append(f"{earlier} | {later}")
    return figures
