"""Identifiers as the system compares them: normalised once, where they come in.

`ALICE`, `alice` followed by a zero-width space and `alice` spelled with a Cyrillic `a` must
not be three people, and `ORD-77`, `ord-77` and `ORD-77` written with U+2010 must not be three
orders. Every id that crosses a boundary
(the command line, the HTTP API's identity, a tool call, a reviewer's name) goes through
`normalise_id` or `normalise_order_id`, and is stored in that form, so equality in SQL is
equality of what a person meant. Ids may be written in any script (`Straße GmbH`, `用户 42`),
but not in a mix of scripts that no name uses: a Latin id with one Cyrillic letter is refused
with a clear message instead of compared (the "highly restrictive" level of Unicode TR39:
one script, or Latin with Han and Japanese kana, Bopomofo or Hangul).
"""

from __future__ import annotations

import re
import unicodedata

from recollect.store.errors import RecollectError

MAX_ID_LENGTH = 128
"""The longest user, organisation or session id; the tables check it too."""
MAX_ORDER_ID_LENGTH = 100

_DASHES = dict.fromkeys(
    map(ord, "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d\u058a\u05be\u1806"),
    "-",
)
_INVISIBLE_EXTRA = {"\u034f", "\u115f", "\u1160", "\u3164", "\uffa0", "\u180e"}
"""Characters that render as nothing but are not in category Cf."""
_ID_PUNCTUATION = frozenset(" ._@+:-")
_SCRIPT_ALIASES = {
    "CJK": "HAN",
    "HALFWIDTH": "KATAKANA",
    "KATAKANA-HIRAGANA": "KATAKANA",
    "FULLWIDTH": "LATIN",
}
_ALLOWED_MIXES = (
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
)
_SPACES = re.compile(r"\s+")
_ORDER_ID = re.compile(r"^[A-Z0-9][A-Z0-9._/#:-]*$")


class InvalidIdError(RecollectError, ValueError):
    """An id that is empty, too long, or made of characters ids may not contain."""


def _visible(text: str) -> str:
    """NFKC, then without format characters (zero-width spaces, joiners, marks of direction),
    and with every dash-like character as an ASCII hyphen."""
    folded = unicodedata.normalize("NFKC", text).translate(_DASHES)
    return "".join(
        ch
        for ch in folded
        if unicodedata.category(ch) not in ("Cf", "Cc") and ch not in _INVISIBLE_EXTRA
    ).strip()


def normalise_id(text: str, what: str = "id") -> str:
    """The canonical form of a user, org, thread or reviewer id, or `InvalidIdError`."""
    if not isinstance(text, str):
        raise InvalidIdError(f"{what} must be text, got {type(text).__name__}")
    value = _SPACES.sub(" ", _visible(text).casefold())
    if not value:
        raise InvalidIdError(f"{what} is empty")
    if len(value) > MAX_ID_LENGTH:
        raise InvalidIdError(
            f"{what} is {len(value)} characters long; the limit is {MAX_ID_LENGTH}"
        )
    if not value[0].isalnum() or not all(ch.isalnum() or ch in _ID_PUNCTUATION for ch in value):
        raise InvalidIdError(
            f"{what} {_shown(text)} may contain only letters, digits, spaces and . _ @ + : - "
            "(and must start with a letter or digit)"
        )
    scripts = _scripts(value)
    if len(scripts) > 1 and not any(scripts <= mix for mix in _ALLOWED_MIXES):
        raise InvalidIdError(
            f"{what} {_shown(text)} mixes the {' and '.join(sorted(scripts)).lower()} scripts; "
            "write it in one"
        )
    return value


def _scripts(value: str) -> frozenset[str]:
    """The scripts of an id's letters, by the first word of each letter's Unicode name."""
    found = set()
    for ch in value:
        if ch.isalpha():
            word = unicodedata.name(ch, "UNKNOWN").split()[0]
            found.add(_SCRIPT_ALIASES.get(word, word))
    return frozenset(found)


def normalise_order_id(text: str) -> str:
    """The canonical form of an order id: upper case, ASCII, dashes unified."""
    value = _visible(text).upper()
    if not value:
        raise InvalidIdError("order id is empty")
    if len(value) > MAX_ORDER_ID_LENGTH:
        raise InvalidIdError(
            f"order id is {len(value)} characters long; the limit is {MAX_ORDER_ID_LENGTH}"
        )
    if not _ORDER_ID.match(value):
        raise InvalidIdError(
            f"order id {_shown(text)} may contain only letters A-Z, digits and . _ / # : -"
        )
    return value


def _shown(text: str) -> str:
    """An offending id, short and with its invisible characters made visible."""
    clipped = text if len(text) <= 40 else text[:37] + "..."
    return ascii(clipped)
