"""Lift exact values out of messages, deterministically, so no summary can paraphrase them.

An order number, an email or a "never do X" must survive any amount of trimming and folding
word for word. Regular expressions are the right tool: they are cheap enough to run on every
turn, they never invent a value, and what they pin can be explained.

Pins are bounded: a restated value moves to the newest place, the oldest values beyond
`MAX_PINNED_VALUES` (and instructions beyond `MAX_PINNED_INSTRUCTIONS`) are unpinned and handed
to the summary fold, and a user can retract a value ("not 884213", "forget order 884213");
`update_state(config, {"pinned": {key: None}})` removes one from outside the conversation.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage, ToolMessage

from recollect.extraction.screening import screen
from recollect.history.content import EXCERPT_KEY
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

_REFERENCE_WORDS = r"order|ticket|account|invoice|case|booking|reference|ref|tracking"
_FOREIGN_ORDER_WORDS = (
    r"bestell(?:ung|nummer)|auftrag(?:snummer)?|commande|pedido|encomenda|ordine|"
    r"bestelling|zamówieni[ea]|заказ[а-я]*|sipariş|注文番号|注文|订单号?|訂單號?|주문번호|주문"  # noqa: RUF001
)
_KEYWORD_REFERENCE = re.compile(
    rf"(?:\b(?P<kind>{_REFERENCE_WORDS})|(?P<foreign>{_FOREIGN_ORDER_WORDS}))"
    r"\s*(?:number|no\.?|num|id|nr\.?|n[°º]|número|numero|номер|#)?\s*"
    r"(?:(?:is|was|=|ist|est|es|è|é|:|\uff1a|は|是|为)\s*)?[:#]?\s*"
    r"#?(?P<value>(?=[A-Za-z0-9/-]*\d)[A-Za-z0-9]+(?:[-/][A-Za-z0-9]+)*)",
    re.IGNORECASE,
)
_RETRACT = re.compile(
    r"\b(?:not|forget|unpin|drop|remove|ignore|scrap|cancel|instead of|rather than|no longer)"
    rf"\s+(?:about\s+)?(?:the\s+|my\s+|that\s+)?(?:(?:{_REFERENCE_WORDS})\s*"
    r"(?:number|no\.?|id|#)?\s*)?#?(?P<value>[^\s,;.!?]*\d[^\s,;!?]*?)(?=[\s,;!?]|\.(?!\d)|$)",
    re.IGNORECASE,
)
_CODE_REFERENCE = re.compile(
    r"(?<![\w-])(?=[A-Z0-9-]*\d)(?=[A-Z0-9-]*[A-Z])[A-Z0-9]+(?:-[A-Z0-9]+)+(?![\w-])"
)
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
_PHONE = re.compile(r"(?<![\w+])\+?\(?\d[\d\s().-]{7,}\d(?!\w)")
_MONEY = re.compile(
    r"(?:[$€£¥]\s?\d[\d,]*(?:\.\d+)?(?:\s?[kKmM]\b)?)"
    r"|(?:\b\d{1,3}(?:[.\s\u00a0\u202f]\d{3})*(?:,\d{1,2})?\s?[€£¥]|\b\d+(?:,\d{1,2})?\s?[€£¥])"
    r"|(?:\b\d[\d,]*(?:\.\d+)?\s?(?:USD|EUR|GBP|CHF|JPY|dollars|euros|pounds)\b)"
    r"|(?:\b\d[\d.]*(?:,\d{1,2})?\s?(?:EUR|CHF|Euro)\b)"
)
_MONTHS = r"Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec"
_DATE = re.compile(
    r"\b\d{4}-\d{2}-\d{2}\b"
    r"|\b\d{1,2}/\d{1,2}/\d{2,4}\b"
    rf"|\b(?:{_MONTHS})[a-z]*\.?\s\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s\d{{4}})?\b"
    rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s(?:{_MONTHS})[a-z]*\.?(?:\s\d{{4}})?\b"
)
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
    return {k: v for k, v in _scan(messages).items() if v is not None}


def _scan(messages: Iterable[BaseMessage]) -> dict[str, PinnedValue | None]:
    """Pins (newest last; a restated key moves) and retractions (value → None, by value)."""
    found: dict[str, PinnedValue | None] = {}
    for message in messages:
        if message.additional_kwargs.get(EXCERPT_KEY):
            continue
        if isinstance(message, HumanMessage):
            text = message.text
            for value in retracted_values(text):
                found.pop(f"retract:{value.lower()}", None)
                found[f"retract:{value.lower()}"] = None
            items = pins_from_text(text, message.id, from_tool=False)
        elif isinstance(message, ToolMessage):
            items = pins_from_text(message.text, message.id, from_tool=True)
        else:
            continue
        for key, pin in items.items():
            found.pop(key, None)
            found[key] = pin
            found.pop(f"retract:{pin['value'].lower()}", None)
    return found


def new_pins(
    current: Mapping[str, PinnedValue] | None, messages: Iterable[BaseMessage]
) -> PinUpdate:
    """The pins that are new or restated by a newer message, and None for each pinned key
    whose value the user retracted: a small update for the `pinned` reducer."""
    existing = current or {}
    update: PinUpdate = {}
    for key, pin in _scan(messages).items():
        if pin is None:
            value = key.removeprefix("retract:")
            update.update({k: None for k, p in existing.items() if p["value"].lower() == value})
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
    return [m.group("value").strip() for m in _RETRACT.finditer(text)]


def pins_from_text(text: str, source_id: str | None, *, from_tool: bool) -> dict[str, PinnedValue]:
    """Key → value; a key is the kind plus the normalised value, so restating one refreshes it.

    Tool results yield identifiers, emails, phones and amounts (not dates or instructions,
    which in a log are timestamps and quoted text), at most `MAX_PINS_PER_TOOL_RESULT`.
    """
    found: list[tuple[str, str]] = []
    taken: list[tuple[int, int]] = []

    def add(kind: str, value: str, span: tuple[int, int]) -> None:
        if any(span[0] < end and start < span[1] for start, end in taken):
            return
        taken.append(span)
        found.append((kind, value.strip()))

    for match in _EMAIL.finditer(text):
        add("email", match.group(0), match.span())
    for match in _RETRACT.finditer(text) if not from_tool else ():
        taken.append(match.span("value"))  # a retracted value is not pinned again
    for match in _KEYWORD_REFERENCE.finditer(text):
        kind = (match.group("kind") or "order").lower()
        add(kind, match.group("value"), match.span("value"))
    for match in _CODE_REFERENCE.finditer(text):
        add("reference", match.group(0), match.span())
    for match in _MONEY.finditer(text):
        add("amount", match.group(0), match.span())
    if not from_tool:
        for match in _DATE.finditer(text):
            add("date", match.group(0), match.span())
    for match in _PHONE.finditer(text):
        if sum(ch.isdigit() for ch in match.group(0)) >= 9:
            add("phone", match.group(0), match.span())
    if from_tool:
        found = found[:MAX_PINS_PER_TOOL_RESULT]
    else:
        found += _instructions(text)
    return {
        f"{kind}:{value.lower()}": PinnedValue(kind=kind, value=value, source_message_id=source_id)
        for kind, value in found
    }


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
            if match:
                # Screened only once it would be pinned: the screen reads every view of the
                # text, and most clauses of a turn are neither constraint nor preference.
                if not screen(clause):
                    found.append((kind, _pinned_part(clause, match.start())))
                break
    return found


def _pinned_part(clause: str, start: int) -> str:
    """The pinned part of a clause: in "order 1-A, never call before 9", from the comma
    before the keyword."""
    if clause[start : start + 1] not in _BOUNDARIES:
        start = clause.rfind(",", 0, start) + 1
    return _LEAD_IN.sub("", clause[start:].strip(_BOUNDARIES + " "))
