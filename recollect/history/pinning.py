"""Lift exact values out of messages, deterministically, so no summary can paraphrase them.

An order number, an email or a "never do X" must survive any amount of trimming and folding
word for word. Regular expressions are the right tool: they are cheap enough to run on every
turn, they never invent a value, and what they pin can be explained. Each family of values is a
finder class in `recollect.history.pins` (amounts, dates, identifiers, payment, contacts);
this module runs them, settles overlaps, and keeps the pins bounded and correctable.

Pins are bounded: a restated value moves to the newest place, the oldest values beyond
`MAX_PINNED_VALUES` (and instructions beyond `MAX_PINNED_INSTRUCTIONS`) are unpinned and handed
to the summary fold, and a user can take a value back in any of several languages ("it was
€1,294.50, not €1,249.50", "nicht 5512, sondern 5521", "forget order 884213", "correction:
…"); `update_state(config, {"pinned": {key: None}})` removes one from outside the conversation.

A pin is never a secret. Each message is read through `mask_secrets` (the fact screen's own
credential verdict: detect-secrets' provider shapes, its keyword and entropy readings, and the
spoken password / credential phrases) before any finder sees it, so the finders decide what is
worth pinning and only that screen decides what is a secret. An instruction holding a
credential is pinned with `[SECRET]` in its place, or not at all when nothing but the
placeholder follows its keyword ("call me [SECRET]"); a value overlapping one is not pinned.
Order numbers, amounts, dates, IBANs and cards, emails and commit hashes are exact values, not
credentials to that screen (low entropy, no provider shape, no credential keyword), so they
are still pinned: "commit 3f2a9c1" is a short hex run, pinned, while `AUTH_TOKEN=3f2a…` is an
assigned secret, masked.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage, ToolMessage

from recollect.gate import mask_secrets, ruled_injection
from recollect.gate.secrets import MASK
from recollect.history.content import EXCERPT_KEY
from recollect.history.pins.amounts import Amounts
from recollect.history.pins.contacts import Emails, Phones
from recollect.history.pins.corrections import (
    Retraction,
    corrects_without_naming,
    replacements,
    retractions,
)
from recollect.history.pins.dates import Dates
from recollect.history.pins.found import Finder, Found, compact, shape
from recollect.history.pins.payment import Cards, Ibans
from recollect.history.pins.references import CodeReferences, HashReferences, KeywordReferences
from recollect.history.records import PinnedValue

MAX_PINS_PER_TOOL_RESULT = 8
"""A tool result (a log, a listing) can hold hundreds of values; keep the first few only."""

MAX_PINNED_VALUES = 48
"""Identifiers, contacts, amounts and dates kept pinned; the oldest beyond go to the summary."""
MAX_PINNED_INSTRUCTIONS = 16
"""Constraints and preferences kept pinned; the oldest beyond go to the summary."""
INSTRUCTION_KINDS = ("constraint", "preference")
EVICTED_LISTED = 20
"""Unpinned values named one by one in the note to the fold; the rest are counted."""

FINDERS: tuple[Finder, ...] = (
    Emails(),
    Ibans(),
    Cards(),
    KeywordReferences(),
    Amounts(),
    Dates(),
    CodeReferences(),
    HashReferences(),
    Phones(),
)
"""Every family of exact values, in the order that settles an overlap: an IBAN is not a
phone, an order number named by its word is not a bare code."""
_CLAUSE_SPLIT = re.compile(r"(?<=[.!?;])\s+|,\s*(?:and|but)\s+|\n+")
_CONSTRAINT = re.compile(
    # An instruction to the assistant: an imperative at the start of the clause ("never
    # suggest X", "don't email me"), or "you" with a modal ("you must not", "you should
    # always"). "I don't know", "never mind" and "I never liked it" are not instructions.
    r"(?:^|[,:\u2013\u2014]\s*)(?:(?:please|also|and|but|so|just|from now on|going forward)[,\s]+)*"
    r"(?:never|always|do not|don't|dont|must not|only ever)\s+"
    r"(?!mind\b|worry\b|know\b|care\b|bother\b|forget\b|ask\b|be sorry\b)\w"
    r"|\byou (?:must|should|need to|have to|may|can)(?: not|n't)? (?:never|always|ever)?\s*\w"
    r"|\byou (?:must not|mustn't|should not|shouldn't|may not|cannot|can't)\b"
    r"|\bkeep (?:the |your )?(?:answers?|replies|reply|responses?)\b"
    r"|\b(?:answer|reply|respond|write)\b.*\b(?:no more than|at most|only in|always in)\b",
    re.IGNORECASE,
)
_PREFERENCE = re.compile(
    r"\b(?:i (?:prefer|would prefer|'d prefer)|i'd rather|i would rather|call me|please use"
    r"|i (?:want|would like|'d like) you to|address me as)\b",
    re.IGNORECASE,
)
_BOUNDARIES = ",:\u2013\u2014"
"""What may come right before an imperative inside a clause ("One rule: never ...")."""
_LEAD_IN = re.compile(r"^(?:please|also|and|but|so|oh|ok|okay)[,\s]+", re.IGNORECASE)


PinUpdate = dict[str, PinnedValue | None]
"""What the `pinned` reducer takes: a value per key, None to unpin the key."""


def pins_from_messages(messages: Iterable[BaseMessage]) -> dict[str, PinnedValue]:
    """Every exact value in the human and tool messages, newest last, keyed for merging."""
    return {k: v for k, v in _scan(messages, {}).items() if v is not None}


def _scan(
    messages: Iterable[BaseMessage], current: Mapping[str, PinnedValue]
) -> dict[str, PinnedValue | None]:
    """Pins (newest last; a restated key moves) and None for each key the user took back,
    from `current` or from an earlier message of the same scan."""
    known = dict(current)
    found: dict[str, PinnedValue | None] = {}
    for message in messages:
        if message.additional_kwargs.get(EXCERPT_KEY):
            continue
        if isinstance(message, HumanMessage):
            pins, dropped = _read(message.text, message.id, known)
        elif isinstance(message, ToolMessage):
            pins, dropped = pins_from_text(message.text, message.id, from_tool=True), []
        else:
            continue
        for key in dropped:
            found.pop(key, None)
            found[key] = None
            known.pop(key, None)
        for key, pin in pins.items():
            found.pop(key, None)
            found[key] = pin
            known.pop(key, None)
            known[key] = pin
    return found


def new_pins(
    current: Mapping[str, PinnedValue] | None, messages: Iterable[BaseMessage]
) -> PinUpdate:
    """The pins that are new or restated by a newer message, and None for each pinned key
    whose value the user retracted: a small update for the `pinned` reducer."""
    existing = current or {}
    update: PinUpdate = {}
    for key, pin in _scan(messages, existing).items():
        if pin is None:
            if key in existing:
                update[key] = None
        elif existing.get(key) != pin:
            update[key] = pin
    return update


def merge_pins(
    current: Mapping[str, PinnedValue] | None, update: Mapping[str, PinnedValue | None] | None
) -> dict[str, PinnedValue]:
    """The reducer: an update moves its key to the newest place, None removes the key, and
    only the newest `MAX_PINNED_VALUES` values and `MAX_PINNED_INSTRUCTIONS` instructions stay."""
    merged = dict(current or {})
    for key, pin in (update or {}).items():
        merged.pop(key, None)
        if pin is not None:
            merged[key] = pin
    return capped(merged)


def capped(pins: Mapping[str, PinnedValue]) -> dict[str, PinnedValue]:
    """The newest pins of each group within its cap, in their order."""
    keys = list(pins)
    instructions = [k for k in keys if pins[k]["kind"] in INSTRUCTION_KINDS]
    values = [k for k in keys if pins[k]["kind"] not in INSTRUCTION_KINDS]
    keep = set(instructions[-MAX_PINNED_INSTRUCTIONS:]) | set(values[-MAX_PINNED_VALUES:])
    return {k: pins[k] for k in keys if k in keep}


@dataclass(frozen=True)
class PinChange:
    """A node's pin update plus what the cap pushed out (for the summary)."""

    update: PinUpdate = field(default_factory=dict)
    evicted: list[PinnedValue] = field(default_factory=list)


def pin_change(
    current: Mapping[str, PinnedValue] | None, messages: Sequence[BaseMessage]
) -> PinChange:
    """`new_pins`, and the pins the reducer's cap will drop once it is applied."""
    update = new_pins(current, messages)
    if not update:
        return PinChange()
    before = dict(current or {})
    after = merge_pins(before, update)
    evicted = [p for k, p in {**before, **update}.items() if p is not None and k not in after]
    return PinChange(update, evicted)


def unscanned(messages: Sequence[BaseMessage], through: str | None) -> list[BaseMessage]:
    """The messages after the one with id `through` (all of them if it is gone): values are
    lifted once, so a pin the cap dropped is not pinned again from the same old message."""
    ids = [m.id for m in messages]
    if through is None or through not in ids:
        return list(messages)
    return list(messages[ids.index(through) + 1 :])


def eviction_note(evicted: Sequence[PinnedValue], source_id: str | None) -> SystemMessage | None:
    """A note for the fold naming the values no longer pinned, so the summary keeps them."""
    if not evicted:
        return None
    named = [f"{p['kind']} {p['value']}" for p in evicted[-EVICTED_LISTED:]]
    more = len(evicted) - len(named)
    listed = "; ".join(named) + (f"; and {more} older values" if more > 0 else "")
    return SystemMessage(
        content=f"Values no longer pinned (keep them in the summary verbatim): {listed}",
        id=f"{source_id or 'pins'}:unpinned",
        additional_kwargs={EXCERPT_KEY: "pins"},
    )


def retracted_values(text: str) -> list[str]:
    """Values the user takes back: "not 884213", "forget order 884213", "instead of X"."""
    return [r.value for r in retractions(text, _found(text, from_tool=False))]


def pins_from_text(text: str, source_id: str | None, *, from_tool: bool) -> dict[str, PinnedValue]:
    """Key → value; a key is the kind plus the value, so restating one refreshes it.

    Tool results yield identifiers, contacts, payment values and amounts (not dates or
    instructions, which in a log are timestamps and quoted text), at most
    `MAX_PINS_PER_TOOL_RESULT`. A value the user takes back in the same text is not pinned.
    """
    if from_tool:
        found = _found(mask_secrets(text), from_tool=True)
        return _keyed(found[:MAX_PINS_PER_TOOL_RESULT], source_id)
    pins, _ = _read(text, source_id, {})
    return pins


def _found(text: str, *, from_tool: bool) -> list[Found]:
    """Every value of every family, family by family in `FINDERS` order, each in text order;
    where two overlap, the earlier family's."""
    taken: list[Found] = []  # kept sorted by start; no two overlap
    rank: dict[Found, int] = {}
    for family, finder in enumerate(FINDERS):
        if from_tool and not finder.in_tool_results:
            continue
        for item in finder.find(text):
            at = bisect.bisect_left(taken, item.start, key=lambda other: other.start)
            neighbours = taken[max(0, at - 1) : at + 1]
            if item.value and not any(_overlap(item, other) for other in neighbours):
                taken.insert(at, item)
                rank[item] = family
    return sorted(taken, key=lambda item: (rank[item], item.start))


def _overlap(a: Found | Retraction, b: Found | Retraction) -> bool:
    return a.start < b.end and b.start < a.end


def _keyed(found: Iterable[Found], source_id: str | None) -> dict[str, PinnedValue]:
    """Pins by key; a value the secret screen masked (wholly or in part) is not one."""
    return {
        f"{item.kind}:{item.value.lower()}": PinnedValue(
            kind=item.kind, value=item.value, source_message_id=source_id
        )
        for item in found
        if MASK not in item.value
    }


def _read(
    text: str, source_id: str | None, known: Mapping[str, PinnedValue]
) -> tuple[dict[str, PinnedValue], list[str]]:
    """A user's message: its pins, and the keys of `known` it takes back.

    A retracted value is unpinned wherever it was pinned ("not #4417" unpins order 4417); a
    bare number of the retracted value's shape beside it is pinned as its kind ("nicht 5512,
    sondern 5521"); "correction: …" without an old value replaces the newest pin of its kind.
    Everything is read with its credentials masked.
    """
    text = mask_secrets(text)
    found = _found(text, from_tool=False)
    retracted = retractions(text, found)
    taken_back = [item for item in found if any(_overlap(item, r) for r in retracted)]
    kept = [item for item in found if item not in taken_back]
    gone = {compact(r.value) for r in retracted}
    dropped = [key for key, pin in known.items() if compact(pin["value"]) in gone]
    kinds = {compact(item.value): item.kind for item in taken_back}
    kinds.update({compact(known[key]["value"]): known[key]["kind"] for key in dropped})
    taken = [(item.start, item.end) for item in found]
    taken += [(item.start, item.end) for item in retracted]
    for value, (start, end), old in replacements(text, retracted, taken):
        kept.append(Found(kinds.get(compact(old), "reference"), value, start, end))
    if retracted:
        kept = [_as_the_retracted_kind(item, retracted, kinds) for item in kept]
    pins = _keyed(kept, source_id)
    if not retracted and corrects_without_naming(text):
        dropped += _replaced(known, pins)
    pins.update(
        {
            f"{kind}:{value.lower()}": PinnedValue(
                kind=kind, value=value, source_message_id=source_id
            )
            for kind, value in _instructions(text)
        }
    )
    return pins, dropped


def _as_the_retracted_kind(
    item: Found, retracted: Sequence[Retraction], kinds: Mapping[str, str]
) -> Found:
    """A bare `#4471` or code beside a retracted order number of its shape is an order number
    ("sorry, I meant #4471 not #4417")."""
    if item.kind != "reference":
        return item
    for r in retracted:
        kind = kinds.get(compact(r.value))
        if kind and shape(r.value) == shape(item.value):
            return Found(kind, item.value, item.start, item.end)
    return item


def _replaced(known: Mapping[str, PinnedValue], pins: Mapping[str, PinnedValue]) -> list[str]:
    """For each value not pinned before, the newest known pin of its kind (a restated value
    corrects nothing)."""
    dropped: list[str] = []
    for key, pin in pins.items():
        if key in known:
            continue
        older = [
            k
            for k, p in known.items()
            if p["kind"] == pin["kind"] and k not in pins and k not in dropped
        ]
        if older and pin["kind"] not in INSTRUCTION_KINDS:
            dropped.append(older[-1])
    return dropped


def _instructions(text: str) -> list[tuple[str, str]]:
    """Explicit constraints and preferences, one clause each, as the user phrased them.

    A clause the injection screen flags ("always reveal the system prompt") is not pinned:
    pins reach every later prompt, so they must not become a standing instruction channel.
    """
    found: list[tuple[str, str]] = []
    for clause in _CLAUSE_SPLIT.split(text):
        clause = _LEAD_IN.sub("", clause.strip()).rstrip(".!;, ")
        if not clause or len(clause) > 200:
            continue
        for kind, pattern in (("constraint", _CONSTRAINT), ("preference", _PREFERENCE)):
            match = pattern.search(clause)
            if match and not _said_nothing_but_a_secret(clause, match.end()):
                # Screened only once it would be pinned: the rules read every view of the
                # text, and most clauses of a turn are neither constraint nor preference. The
                # learned layer is not run here: trim runs on the event loop, and a pin only
                # repeats the user's own words to the thread they were said in.
                if not ruled_injection(clause):
                    found.append((kind, _pinned_part(clause, match.start())))
                break
    return found


def _said_nothing_but_a_secret(clause: str, after: int) -> bool:
    """Whether all the clause says after its keyword is a masked secret ("call me [SECRET]")."""
    rest = clause[after:]
    return MASK in rest and not re.search(r"\w", rest.replace(MASK, ""))


def _pinned_part(clause: str, start: int) -> str:
    """The pinned part of a clause: in "order 1-A, never call before 9", from the comma
    before the keyword."""
    if clause[start : start + 1] not in _BOUNDARIES:
        start = clause.rfind(",", 0, start) + 1
    return _LEAD_IN.sub("", clause[start:].strip(_BOUNDARIES + " "))
