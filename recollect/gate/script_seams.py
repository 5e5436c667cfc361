"""Seams between scripts that write without spaces and the Latin digits and letters of a value.

Japanese, Chinese, Korean particles, Thai and others glue a value to the words around it
("携帯は090-1234-5678です", "信用卡4111111111111111"). Python's `\\w` counts those letters as
word characters, so every detector's word boundary fails there and the value goes through.
The redaction reads the text with an invisible seam mark put between such a letter and an
adjacent printable ASCII character, then takes the marks out again: the detectors keep
their boundaries, and the stored text is the user's own except for the placeholders.
"""

from __future__ import annotations

import re

SEAM = "\ue000"
"""A private-use character: neither a word character nor space, so every boundary sees it."""

_SPACED_SCRIPTS = (
    "\u0000-\u024f"  # Latin, with its supplements and extensions
    "\u0250-\u02ff"  # IPA and modifier letters
    "\u0370-\u052f"  # Greek, Cyrillic
    "\u1e00-\u1fff"  # Latin and Greek extended (Vietnamese among them)
)
_OTHER_LETTER = rf"[^\W\d_{_SPACED_SCRIPTS}]"
_VALUE_CHAR = r"(?![@.])[!-~]"
"""Printable ASCII, the letters, digits and signs values are written in; but not `@` or `.`,
which join an address's parts whatever script those are in ("用户@例子.中国")."""
_SEAMS = re.compile(rf"(?<={_OTHER_LETTER})(?={_VALUE_CHAR})|(?<={_VALUE_CHAR})(?={_OTHER_LETTER})")


def open_seams(text: str) -> str:
    """`text` with a seam mark at each place a letter of another script touches a value's
    character; unchanged when the text already holds the mark (it would not come out right)."""
    if SEAM in text:
        return text
    return _SEAMS.sub(SEAM, text)


def add_seams(text: str) -> str:
    """Seam marks wherever they are missing, beside any already in (text decoded after the
    marks went in has new digits to mark)."""
    return _SEAMS.sub(SEAM, text)


def close_seams(text: str) -> str:
    """The marks `open_seams` put in, taken out."""
    return text.replace(SEAM, "")
