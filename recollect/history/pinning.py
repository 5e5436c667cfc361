"""Lift exact values out of messages, deterministically, so no summary can paraphrase them.

An order number, an email or a "never do X" must survive any amount of trimming and folding
word for word. Regular expressions are the right tool: they are cheap enough to run on every
turn, they never invent a value, and what they pin can be explained.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage

from recollect.extraction.screening import screen
from recollect.history.records import PinnedValue

MAX_PINS_PER_TOOL_RESULT = 8
"""A tool result (a log, a listing) can hold hundreds of values; keep the first few only."""

_REFERENCE_WORDS = r"order|ticket|account|invoice|case|booking|reference|ref|tracking"
_KEYWORD_REFERENCE = re.compile(
    rf"\b(?P<kind>{_REFERENCE_WORDS})\s*(?:number|no\.?|num|id|#)?\s*[:#]?\s*"
    r"#?(?P<value>(?=[A-Za-z0-9/-]*\d)[A-Za-z0-9]+(?:[-/][A-Za-z0-9]+)*)",
    re.IGNORECASE,
)
_CODE_REFERENCE = re.compile(
    r"(?<![\w-])(?=[A-Z0-9-]*\d)(?=[A-Z0-9-]*[A-Z])[A-Z0-9]+(?:-[A-Z0-9]+)+(?![\w-])"
)
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
_PHONE = re.compile(r"(?<![\w+])\+?\(?\d[\d\s().-]{7,}\d(?!\w)")
_MONEY = re.compile(
    r"(?:[$€£¥]\s?\d[\d,]*(?:\.\d+)?(?:\s?[kKmM]\b)?)"
    r"|(?:\b\d[\d,]*(?:\.\d+)?\s?(?:USD|EUR|GBP|CHF|JPY|dollars|euros|pounds)\b)"
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
    r"\b(?:never|always|do not|don't|must not|mustn't|no more than|at most|only ever)\b"
    r"|\bkeep (?:the |your |my )?(?:answers?|replies|reply|responses?)\b",
    re.IGNORECASE,
)
_PREFERENCE = re.compile(
    r"\b(?:i (?:prefer|like|want|would like|'d like)|i'd rather|call me|please use)\b",
    re.IGNORECASE,
)
_LEAD_IN = re.compile(r"^(?:please|also|and|but|so|oh|ok|okay)[,\s]+", re.IGNORECASE)


def pins_from_messages(messages: Iterable[BaseMessage]) -> dict[str, PinnedValue]:
    """Every exact value in the human and tool messages, in order, keyed for merging."""
    pins: dict[str, PinnedValue] = {}
    for message in messages:
        if isinstance(message, HumanMessage):
            pins.update(pins_from_text(message.text, message.id, from_tool=False))
        elif isinstance(message, ToolMessage):
            pins.update(pins_from_text(message.text, message.id, from_tool=True))
    return pins


def new_pins(
    current: Mapping[str, PinnedValue] | None, messages: Iterable[BaseMessage]
) -> dict[str, PinnedValue]:
    """Only the pins that are new or restated by a newer message, for a small state update."""
    existing = current or {}
    return {k: v for k, v in pins_from_messages(messages).items() if existing.get(k) != v}


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
    for match in _KEYWORD_REFERENCE.finditer(text):
        add(match.group("kind").lower(), match.group("value"), match.span("value"))
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
        if not clause or len(clause) > 200 or screen(clause):
            continue
        for kind, pattern in (("constraint", _CONSTRAINT), ("preference", _PREFERENCE)):
            match = pattern.search(clause)
            if match:
                # "order 1-A, never call before 9" → the part from the comma before the keyword
                start = clause.rfind(",", 0, match.start()) + 1
                found.append((kind, _LEAD_IN.sub("", clause[start:].strip())))
                break
    return found
