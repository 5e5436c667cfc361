"""The pin corpus in `tests/data/pins/`: exact values written from classes (currency
notations, date formats, identifiers named in many languages, payment and contact values),
corrections that take a value back, and benign text with numbers that are not values. Each
line is tagged `tune` or `holdout`; the held-out lines were written before the finders and
never adjusted on, so their figure says how the finders do on formats they were not shown."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage

from recollect.history.pinning import INSTRUCTION_KINDS, merge_pins, new_pins
from recollect.history.pins.found import compact
from recollect.history.records import PinnedValue

DATA = Path(__file__).resolve().parent.parent / "data" / "pins"
ID_KINDS = frozenset(
    {"order", "booking", "ticket", "invoice", "tracking", "account", "case", "reference"}
)
"""Kinds of identifier: the word that named it decides which, and any of them is right."""


@dataclass(frozen=True)
class Case:
    """User turns, the (kind, value) pins they must leave ("" = any kind), the values they
    must not leave pinned, and where the case comes from."""

    turns: tuple[str, ...]
    pinned: tuple[tuple[str, str], ...]
    unpinned: tuple[str, ...]
    kind: str
    lang: str
    split: str


def _load(name: str) -> tuple[Case, ...]:
    rows: list[dict[str, Any]] = [
        json.loads(line)
        for line in (DATA / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    return tuple(
        Case(
            turns=tuple(row["turns"]),
            pinned=tuple((kind, value) for kind, value in row["pinned"]),
            unpinned=tuple(row.get("unpinned", ())),
            kind=row["class"],
            lang=row["lang"],
            split=row["split"],
        )
        for row in rows
    )


VALUES = _load("values")
CORRECTIONS = _load("corrections")
BENIGN = _load("benign")


def pins_after(case: Case) -> dict[str, PinnedValue]:
    """The turns as a thread sees them: each message scanned once, through the reducer."""
    pins: dict[str, PinnedValue] = {}
    for i, text in enumerate(case.turns):
        pins = merge_pins(pins, new_pins(pins, [HumanMessage(content=text, id=f"m{i}")]))
    return pins


def _right_kind(expected: str, got: str) -> bool:
    return expected in ("", got) or (expected in ID_KINDS and got in ID_KINDS)


def lifted(case: Case, pins: dict[str, PinnedValue]) -> bool:
    """Every expected value pinned exactly, as its kind; no taken-back value left pinned."""
    held = [(p["kind"], p["value"]) for p in pins.values()]
    present = all(
        any(value == got and _right_kind(kind, got_kind) for got_kind, got in held)
        for kind, value in case.pinned
    )
    gone = {compact(value) for value in case.unpinned}
    return present and not any(compact(value) in gone for _, value in held)


def false_pins(pins: dict[str, PinnedValue]) -> list[str]:
    """Values (not instructions) pinned from text that holds none."""
    return [
        f"{p['kind']}: {p['value']}" for p in pins.values() if p["kind"] not in INSTRUCTION_KINDS
    ]


@dataclass
class Share:
    """Cases that came out right, and the ones that did not."""

    right: int = 0
    total: int = 0

    @property
    def rate(self) -> float:
        return round(self.right / self.total, 4) if self.total else 1.0


def score(split: str | None = None) -> dict[str, Any]:
    """Lifted share (values, corrections), false-pin rate on benign text, and every miss."""
    values, corrections, benign = Share(), Share(), Share()
    by_family: dict[str, Share] = defaultdict(Share)
    misses: list[str] = []
    for group, cases in (("values", VALUES), ("corrections", CORRECTIONS)):
        for case in cases:
            if split not in (None, case.split):
                continue
            pins = pins_after(case)
            ok = lifted(case, pins)
            share = values if group == "values" else corrections
            family = by_family[case.kind.split(":")[0]]
            for tally in (share, family):
                tally.total += 1
                tally.right += ok
            if not ok:
                misses.append(f"{case.turns[-1]!r} → {sorted(p['value'] for p in pins.values())}")
    for case in BENIGN:
        if split not in (None, case.split):
            continue
        wrong = false_pins(pins_after(case))
        benign.total += 1
        benign.right += bool(wrong)
        if wrong:
            misses.append(f"benign {case.turns[-1]!r} → {wrong}")
    lifted_total = Share(values.right + corrections.right, values.total + corrections.total)
    return {
        "cases": lifted_total.total,
        "lifted": lifted_total.rate,
        "values_lifted": values.rate,
        "corrections_lifted": corrections.rate,
        "lifted_by_family": {k: v.rate for k, v in sorted(by_family.items())},
        "benign_cases": benign.total,
        "false_pin_rate": benign.rate,
        "misses": misses,
    }
