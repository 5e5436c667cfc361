"""One normalisation before any rule reads a candidate fact.

An attacker hides an instruction from a pattern by changing how it is written, not what it
says: full-width or mathematical letters, invisible characters inside words, Cyrillic or Greek
look-alikes, digits for letters, letters spaced apart, or the whole text in base64, hex, HTML
entities or a comment. `canonical` is the stored form (NFKC, invisibles gone); `views` adds every
other reading the injection rules must also see, so one rule set covers all of them.
"""

# ruff: noqa: RUF001, RUF003  (look-alike characters are what these rules are about)
from __future__ import annotations

import base64
import binascii
import codecs
import html
import re
import unicodedata
from urllib.parse import unquote

_DEFAULT_IGNORABLE = (
    "\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180f\u3164\uffa0\u2800"
    + "".join(chr(c) for c in range(0xFE00, 0xFE10))
)
"""Default-ignorable code points that are not category Cf (combining grapheme joiner,
Hangul fillers, variation selectors, braille blank)."""


def _invisible(char: str) -> bool:
    return unicodedata.category(char) == "Cf" or char in _DEFAULT_IGNORABLE


_INVISIBLE_RE = re.compile(  # no format character is assigned in planes 2 to 13
    "["
    + "".join(
        re.escape(chr(c))
        for c in (*range(0x80, 0x20000), *range(0xE0000, 0xE1000))
        if not 0xD800 <= c <= 0xDFFF and _invisible(chr(c))
    )
    + "]"
)


def normalised(text: str) -> str:
    """Folded Unicode, single spaces, no trailing full stop: the form that is stored."""
    collapsed = " ".join(canonical(text).split())
    return collapsed.rstrip(".").strip()


def canonical(text: str) -> str:
    """NFKC (full-width, mathematical and ligature forms folded), then no invisible characters
    (Unicode category Cf, variation selectors, the combining grapheme joiner, fillers)."""
    return _INVISIBLE_RE.sub("", unicodedata.normalize("NFKC", text))


# A TR39-style skeleton restricted to what matters here: letters that look like Latin ones are
# read as Latin, so "Іgnore" (Cyrillic І) meets the same rule as "Ignore".
_CONFUSABLES = str.maketrans(
    {
        # Cyrillic
        "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o",
        "р": "p", "с": "c", "т": "t", "у": "y", "х": "x", "ѕ": "s", "і": "i", "ї": "i",
        "ј": "j", "ԁ": "d", "ԛ": "q", "ԝ": "w", "һ": "h", "ӏ": "l", "ɡ": "g", "ո": "n",
        # Greek
        "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o",
        "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "γ": "y", "ω": "w", "μ": "u",
        # Armenian, Latin variants
        "օ": "o", "ս": "u", "հ": "h", "ց": "g", "ı": "i", "ȷ": "j", "ɑ": "a", "ɩ": "i",
        "ʏ": "y", "ɢ": "g", "ʜ": "h", "ʟ": "l", "ɴ": "n", "ʀ": "r", "ᴀ": "a", "ᴇ": "e",
        "ᴏ": "o", "ᴛ": "t", "ᴜ": "u", "ꜱ": "s",
    }
)  # fmt: skip
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a",
                       "$": "s", "!": "i", "|": "l", "€": "e"})  # fmt: skip
_LEET_TOKEN = re.compile(r"[\w@$!|€]*[a-z][\w@$!|€]*")
_LEET_CHARS = re.compile(r"[0134579@$!|€]")
_EMPHASIS = re.compile(r"[*_~`^]+")
_SPACED = re.compile(r"(?<![^\W\d_])(?:[^\W\d_][ .\-·/]){2,}[^\W\d_](?![^\W\d_])")
_SEPARATOR = re.compile(r"[ .\-·/]")


def _deleet(match: re.Match[str]) -> str:
    token = match.group(0)
    if not _LEET_CHARS.search(token) or len(token) < 2:
        return token
    return token.translate(_LEET)


def skeleton(text: str) -> str:
    """Lower case, look-alike letters read as Latin, digits inside words read as letters
    ("ign0re"), emphasis marks dropped, letters written apart joined ("i g n o r e")."""
    folded = text.casefold().translate(_CONFUSABLES)
    folded = _LEET_TOKEN.sub(_deleet, folded)
    folded = _EMPHASIS.sub("", folded)
    return _SPACED.sub(lambda m: _SEPARATOR.sub("", m.group(0)), folded)


_COMMENT = re.compile(
    r"<!--(.*?)(?:-->|$)|\[[^\]]*\]:\s*(?:#|<>)\s*\((.*?)\)|/\*(.*?)\*/", re.DOTALL
)
BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
_HEX = re.compile(r"(?:(?:\\x|0x)?[0-9a-fA-F]{2}[\s:,]?){8,}")


def _printable(raw: bytes) -> str | None:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    readable = sum(c.isprintable() or c.isspace() for c in text)
    letters = sum(c.isalpha() for c in text)
    if not text or readable < len(text) or letters < len(text) * 0.5:
        return None
    return text


def from_base64(run: str) -> str | None:
    padded = run + "=" * (-len(run) % 4)
    try:
        raw = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        return None
    return _printable(raw)


def _from_hex(run: str) -> str | None:
    digits = re.sub(r"\\x|0x|[\s:,]", "", run)
    if len(digits) % 2:
        digits = digits[:-1]
    try:
        return _printable(bytes.fromhex(digits))
    except ValueError:
        return None


def decoded(text: str) -> list[str]:
    """Text hidden inside this one: comment bodies, HTML entities and %-escapes resolved, and
    base64 or hex runs that decode to readable text."""
    found: list[str] = []
    found += [next(g for g in m.groups() if g is not None) for m in _COMMENT.finditer(text)]
    for resolved in (html.unescape(text), unquote(text)):
        if resolved != text:
            found.append(resolved)
    for run in BASE64_RUN.findall(text):
        if (plain := from_base64(run)) is not None:
            found.append(plain)
    for match in _HEX.finditer(text):
        if (plain := _from_hex(match.group(0))) is not None:
            found.append(plain)
    return [canonical(piece) for piece in found if piece.strip()]


def views(text: str, depth: int = 2) -> list[str]:
    """Every reading of `text` the injection rules must see: the canonical form, its skeleton,
    its ROT13 reading, and (recursively, `depth` levels) whatever it decodes to."""
    base = canonical(text)
    out = [base, skeleton(base), codecs.encode(base, "rot13")]
    if depth > 0:
        for piece in decoded(base):
            out += views(piece, depth - 1)
    return list(dict.fromkeys(out))
