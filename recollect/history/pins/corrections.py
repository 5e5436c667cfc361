"""Values the user takes back: "it was €1,294.50, not €1,249.50", "sorry, I meant #4471 not
#4417", "nicht 5512, sondern 5521", "123456ではなく123465", "778899가 아니라 778989",
"不是884213", "forget order 884213", and "correction: it's dana@example.com".

A retraction names its value right after a negation ("not", "nicht", "pas", "non", "não",
"不是", "instead of" …) or right before one that follows (ではなく, 가 아니라, नहीं, değil). A
correction that names no old value ("correction: …", "I meant …") replaces the newest pin of
the same kind. A bare number beside a retracted value, of the same shape, is its replacement.
"""

# ruff: noqa: RUF001  (full-width punctuation is what these rules are about)
from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from recollect.history.pins.found import Found, lowered, shape
from recollect.history.pins.references import KIND_WORDS

_BEFORE = (
    r"not|instead\s+of|rather\s+than|forget(?:\s+about)?|unpin|drop|remove|ignore|scrap|"
    r"no\s+longer|nicht|statt|anstatt|anstelle\s+von|vergiss|pas|et\s+non|non\s+pas|"
    r"au\s+lieu\s+de|oublie[zr]?|en\s+lugar\s+de|en\s+vez\s+de|olvida|não|nao|em\s+vez\s+de|"
    r"ao\s+invés\s+de|esquece|non|invece\s+di|anziché|al\s+posto\s+di|dimentica|niet|"
    r"in\s+plaats\s+van|vergeet|nie|zamiast|не|вместо|забудь|inte|istället\s+för"
)
"""Negations written before the value they take back (whole words)."""
_JOINED = r"而不是|不是|并非|並非"
"""Negations that need no space ("不是884213")."""
_AFTER = (
    r"\s*(?:가|이)?\s*(?:아니라|아니고|아닙니다)|\s*(?:ではなく|じゃなくて|じゃなく|ではない|じゃない)"
    r"|\s+(?:नहीं|değil|yerine)"
)
"""Negations written after the value they take back."""
_AFTER_WORDS = re.compile(r"아니|ではな|じゃな|नहीं|değil|yerine")
_KIND_WORD = "|".join(KIND_WORDS.values())
_FILLER = re.compile(
    r"(?:\s*(?:about|the|my|that|this|it|le|la|les|el|il|lo|der|die|das|den|dem|mein|meine|"
    r"meinen|mon|ma|mi|o|a|do|da|du|del|de|di|mijn|moje|mój)(?=\s))*"
    rf"(?:\s*(?:{_KIND_WORD})(?:\s*(?:number|no\.?|nr\.?|nummer|numéro|número|numero|id))?)?"
    r"\s*[:#]?\s*"
)
"""What may stand between a negation and its value: "not the order number #4417"."""
_CUE = re.compile(rf"(?:{_BEFORE}|{_JOINED}|no)")
"""Matched on the lowered text; whole words and Spanish ", no" are checked around each hit."""
_LETTER = re.compile(r"[^\W\d_]")
_SPANISH_NO = re.compile(r"(?:[,;，、]|\by)\s*$")
RETRACT_AFTER = re.compile(_AFTER)
_TOKEN = re.compile(
    r"#?(?P<value>[^\s,;!?。、，：:()]*\d[^\s,;!?。、，：:()]*?)(?=[\s,;!?。、，：:()]|\.(?!\d)|$)"
)
_BARE_BEFORE_AFTER = re.compile(
    rf"(?<![A-Za-z0-9#])#?(?P<value>[A-Za-z0-9][A-Za-z0-9/-]*\d[A-Za-z0-9/-]*|\d)(?=(?:{_AFTER}))"
)
_BARE = re.compile(
    r"(?<![A-Za-z0-9#-])#?(?P<value>(?=[A-Za-z0-9-]*\d)[A-Za-z0-9]{3,}(?:-[A-Za-z0-9]+)*)"
    r"(?![A-Za-z0-9-])"
)
CORRECTION = re.compile(
    r"(?:correction|correcting|scratch\s+that|typo|i\s+meant(?!\s+to\b)|"
    r"sorry,?\s+it(?:'s|\s+is|\s+was)|actually,?\s+it(?:'s|\s+is|\s+was)|korrektur|berichtigung|"
    r"ich\s+meinte|je\s+voulais\s+dire|corrección|quise\s+decir|correção|quis\s+dizer|"
    r"correzione|intendevo|ik\s+bedoelde|poprawka|поправка|я\s+имел\s+в\s+виду"
    r"|訂正|更正|정정|수정|सुधार)"
)
"""Matched on the lowered text."""


def _negations(low: str) -> Iterator[int]:
    """Where the value after each negation in the (lowered) text starts."""
    for cue in _CUE.finditer(low):
        start, end = cue.span()
        word = cue.group(0)
        if _LETTER.match(word):
            if (start and _LETTER.match(low, start - 1)) or _LETTER.match(low, end):
                continue
            if word == "no" and not _SPANISH_NO.search(low, max(0, start - 4), start):
                continue
        filler = _FILLER.match(low, end)
        yield filler.end() if filler else end


@dataclass(frozen=True)
class Retraction:
    """A value taken back, as written, and where it stands."""

    value: str
    start: int
    end: int


def retractions(text: str, found: Sequence[Found]) -> list[Retraction]:
    """The values in `text` the user takes back; a found value is taken whole."""
    starts = {item.start: item for item in found}
    out: list[Retraction] = []
    for position in _negations(lowered(text)):
        item = starts.get(position)
        if item is not None:
            out.append(Retraction(item.value, item.start, item.end))
        elif token := _TOKEN.match(text, position):
            out.append(Retraction(token.group("value"), *token.span("value")))
    if not _AFTER_WORDS.search(text):
        return out
    for item in found:
        if RETRACT_AFTER.match(text, item.end):
            out.append(Retraction(item.value, item.start, item.end))
    for bare in _BARE_BEFORE_AFTER.finditer(text):
        if not any(r.start <= bare.start("value") < r.end for r in out):
            out.append(Retraction(bare.group("value"), *bare.span("value")))
    return out


def replacements(
    text: str, retracted: Sequence[Retraction], taken: Sequence[tuple[int, int]]
) -> list[tuple[str, tuple[int, int], str]]:
    """Bare values (not otherwise found) with the shape of a retracted one: its replacement,
    as (value, span, the retracted value it replaces)."""
    shapes = {shape(r.value): r.value for r in retracted}
    if not shapes:
        return []
    out: list[tuple[str, tuple[int, int], str]] = []
    for match in _BARE.finditer(text):
        span = match.span("value")
        if any(span[0] < end and start < span[1] for start, end in taken):
            continue
        old = shapes.get(shape(match.group("value")))
        if old is not None:
            out.append((match.group("value"), span, old))
    return out


def corrects_without_naming(text: str) -> bool:
    """True when the text says it corrects ("correction:", "I meant") without a retraction."""
    return bool(CORRECTION.search(lowered(text)))
