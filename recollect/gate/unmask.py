"""Read a disguised script back as plain text before the learned injection layer embeds it.

`normalise.views` folds what Unicode and the decoders can (full-width, look-alikes, base64);
an embedder still sees noise when the letters themselves are disguised: small capitals,
upside-down text, stacks of combining marks, emoji between letters, leetspeak, pig latin, or
the whole line written backwards. `unmasked` undoes each of those that is present and leaves
plain text in any language as it was (Devanagari and Thai keep their marks, Cyrillic stays
Cyrillic), so the classifier reads what the sentence says.
"""

# ruff: noqa: RUF001  (disguised letters are what this module is about)
from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from recollect.gate.normalise import BASE64_RUN, canonical, from_base64

Pieces = Callable[[str], int]
"""How many tokens the embedder's tokenizer cuts a text into: real words cost fewer."""

_SMALL_CAPS = str.maketrans(
    "ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘǫʀꜱᴛᴜᴠᴡʏᴢ",
    "abcdefghijklmnopqrstuvwyz",
)
_UPSIDE_DOWN = str.maketrans(
    {
        "ɐ": "a", "q": "b", "ɔ": "c", "p": "d", "ǝ": "e", "ɟ": "f", "ƃ": "g", "ɥ": "h",
        "ᴉ": "i", "ı": "i", "ɾ": "j", "ʞ": "k", "ɯ": "m", "u": "n", "d": "p", "b": "q",
        "ɹ": "r", "ʇ": "t", "n": "u", "ʌ": "v", "ʍ": "w", "ʎ": "y", "∀": "A", "Ɔ": "C",
        "Ǝ": "E", "Ⅎ": "F", "⅁": "G", "ſ": "J", "˥": "L", "Ԁ": "P", "∩": "U", "Λ": "V",
        "⅄": "Y", "˙": ".", "¿": "?", "¡": "!", "„": '"', ",": "'", "'": ",",
    }
)  # fmt: skip
_FLIPPED_ONLY = frozenset("ɐɔǝɟƃɥᴉɾʞɯɹʇʌʍʎ∀ƆƎℲ⅁˥Ԁ∩Λ⅄")
"""Letters that occur in upside-down text and almost nowhere else."""
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a",
                       "$": "s", "!": "i", "|": "l", "€": "e"})  # fmt: skip
_LEET_CHARS = frozenset("0134579@$!|€")
_LEET_SYMBOLS = frozenset("@$!|€")
_SPLIT_LETTERS = re.compile(r"(?<!\S)(?:[^\W\d_] )+[^\W\d_](?!\S)")
_WORD = re.compile(r"[A-Za-z]+")
_VOWELS = frozenset("aeiou")


def _mostly(found: int, total: int, share: float) -> bool:
    return total > 0 and found >= 2 and found >= share * total


def _upside_down(text: str) -> str:
    letters = [c for c in text if c.isalpha()]
    if not _mostly(sum(c in _FLIPPED_ONLY for c in letters), len(letters), 0.15):
        return text
    return text.translate(_UPSIDE_DOWN)[::-1]


def _small_caps(text: str) -> str:
    return text.translate(_SMALL_CAPS)


def _stray_marks(text: str) -> str:
    """Combining marks left on Latin letters after composition are decoration (Zalgo); marks
    on other scripts (Devanagari vowels, Thai tones, Arabic vowels) are spelling and stay."""
    out: list[str] = []
    base_latin = False
    for char in unicodedata.normalize("NFC", text):
        if unicodedata.category(char) in ("Mn", "Me"):
            if not base_latin:
                out.append(char)
            continue
        base_latin = char.isascii() or unicodedata.name(char, "").startswith("LATIN")
        out.append(char)
    return "".join(out)


def _symbol_separators(text: str) -> str:
    """Emoji and pictographs between letters ("i🔥g🔥n🔥o🔥r🔥e") go; words they held apart
    stay apart, letters they split are joined again."""
    if not any(unicodedata.category(c) == "So" for c in text):
        return text
    spaced = "".join(" " if unicodedata.category(c) == "So" else c for c in text)
    joined = _SPLIT_LETTERS.sub(lambda m: m.group(0).replace(" ", ""), spaced)
    return " ".join(joined.split())


def _is_leet(token: str) -> bool:
    has_leet = any(c in _LEET_CHARS for c in token)
    return has_leet and (any(c.isalpha() for c in token) or any(c in _LEET_SYMBOLS for c in token))


def _leetspeak(text: str) -> str:
    """Digits and symbols for letters, read as letters only when a quarter of the words (and
    at least three) use them, so "drives a 4x4, listens to mp3s" is left alone."""
    tokens = text.split()
    leet = [_is_leet(token) for token in tokens]
    if sum(leet) < 3 or sum(leet) < 0.25 * len(tokens):
        return text
    return " ".join(
        t.translate(_LEET).lower() if is_leet or set(t) <= _LEET_CHARS else t
        for t, is_leet in zip(tokens, leet, strict=True)
    )


def _pig_latin_candidates(word: str) -> list[str]:
    """Readings of one pig-latin word, the likeliest first: a vowel-initial word with its
    "w"/"y" dropped, then the moved consonant cluster put back, longest cluster first."""
    stem = word[:-2]
    out = [stem[:-1]] if stem[-1:] in ("w", "y") and stem[:1].lower() in _VOWELS else []
    cluster = len(stem) - len(stem.rstrip("bcdfghjklmnpqrstvwxyzBCDFGHJKLMNPQRSTVWXYZ"))
    out += [stem[-k:] + stem[:-k] for k in range(min(cluster, 3), 0, -1)]
    return out or [stem]


def _pig_latin(text: str, pieces: Pieces | None) -> str:
    words = [w for w in _WORD.findall(text) if len(w) >= 3]
    latin = [w for w in words if w.lower().endswith("ay")]
    if pieces is None or not _mostly(len(latin), len(words), 0.6) or len(latin) < 3:
        return text

    def decode(match: re.Match[str]) -> str:
        word = match.group(0)
        if len(word) < 4 or not word.lower().endswith("ay"):
            return word
        candidates = _pig_latin_candidates(word)
        return min(candidates, key=lambda c: (pieces(c), candidates.index(c)))

    return _WORD.sub(decode, text)


_TAGS = re.compile("[\U000e0020-\U000e007e]+")
_MORSE_CODES = (
    ".- -... -.-. -.. . ..-. --. .... .. .--- -.- .-.. -- -. --- .--. --.- .-. ... - ..- ...- "
    ".-- -..- -.-- --.. ----- .---- ..--- ...-- ....- ..... -.... --... ---.. ----."
)
_MORSE = dict(zip(_MORSE_CODES.split(), "abcdefghijklmnopqrstuvwxyz0123456789", strict=True))
_MORSE_LINE = re.compile(r"^[.\-/\s|]+$")


def _tag_characters(text: str) -> str:
    """Unicode tag characters (U+E0020-E007E, invisible) spell ASCII; read them as the letters
    they stand for, beside the visible text, before `canonical` drops them as invisible."""
    return _TAGS.sub(lambda m: " " + "".join(chr(ord(c) - 0xE0000) for c in m.group(0)) + " ", text)


def _base64(text: str) -> str:
    """A base64 run that decodes to readable text is read as that text."""
    return BASE64_RUN.sub(lambda m: from_base64(m.group(0)) or m.group(0), text)


def _morse(text: str) -> str:
    """A line of dots and dashes is read as the letters they code (words split by "/")."""
    if not _MORSE_LINE.match(text) or text.count(".") + text.count("-") < 8:
        return text
    words = re.split(r"\s*[/|]\s*", text.strip())
    return " ".join("".join(_MORSE.get(code, "") for code in word.split()) for word in words)


def _shift(text: str, by: int) -> str:
    return "".join(
        chr((ord(c) - base + by) % 26 + base) if c.isascii() and c.isalpha() else c
        for c in text
        for base in (97 if c.islower() else 65,)
    )


def _caesar(text: str, pieces: Pieces | None) -> str:
    """Latin letters shifted along the alphabet (ROT13, Caesar): the shift whose reading the
    tokenizer cuts into far fewer pieces, tried only when the line reads as noise."""
    words = _WORD.findall(text)
    if pieces is None or len(words) < 3:
        return text
    plain = pieces(text)
    if plain < 2.0 * len(text.split()):
        return text
    best = min((_shift(text, by) for by in range(1, 26)), key=pieces)
    return best if pieces(best) < 0.75 * plain else text


def _accents(text: str, pieces: Pieces | None) -> str:
    """Latin letters piled with accents ("ïgnörë àll") read without them, when a third of the
    letters carry one and the tokenizer cuts the bare reading into far fewer pieces."""
    letters = [c for c in text if c.isalpha()]
    marked = sum(not c.isascii() and unicodedata.name(c, "").startswith("LATIN") for c in letters)
    if pieces is None or not _mostly(marked, len(letters), 0.3):
        return text
    bare = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return bare if pieces(bare) < 0.8 * pieces(text) else text


def _reversed(text: str, pieces: Pieces | None) -> str:
    """The line read backwards, when the tokenizer finds far fewer, longer words that way."""
    if pieces is None or len(text) < 8:
        return text
    backwards = text[::-1]
    return backwards if pieces(backwards) < 0.8 * pieces(text) else text


def unmasked(text: str, pieces: Pieces | None = None) -> str:
    """`text` with every disguise this module knows undone; `pieces` (the tokenizer's count)
    decides the readings only a vocabulary can tell apart (backwards, pig latin)."""
    plain = canonical(_small_caps(_upside_down(_tag_characters(text))))
    plain = _morse(_base64(plain))
    plain = _symbol_separators(_stray_marks(plain))
    plain = _leetspeak(plain)
    plain = _pig_latin(_caesar(_accents(plain, pieces), pieces), pieces)
    return " ".join(_reversed(plain, pieces).split())
