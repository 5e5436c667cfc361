"""Small talk: messages that carry nothing a memory could answer ("thanks!", "ok cool",
"jajaja", "ありがとう", "👍").

Such a message recalls no facts and no episodes. The embedder cannot tell: e5 puts "thanks!"
at 0.82 to 0.84 cosine from ordinary facts, above its relevance floor, so the decision is made
on words. A message is small talk when, once normalised, it splits entirely into phrases of
`phatic_phrases.json` (seventeen languages), laughter, emoji, emoticons and punctuation;
one other word ("thanks, where do I live?") and it is not. Normalising folds case, width,
Latin, Cyrillic and Arabic accents and letter runs ("thanksss" and "thankss" are "thanks"); a
word of five letters or more one transposition, deletion or insertion away from a phrase word
counts as that word ("thnaks"). Scripts written without spaces (Chinese, Japanese, Thai) are
split into characters, and phrases match character runs. Measured in `bench/smalltalk.py`.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

PHRASES_FILE = "phatic_phrases.json"
MAX_CHARS = 200
"""Longer messages are never small talk (the longest in the corpus has 29 characters), so a
long message costs nothing to check."""
TYPO_MIN_LETTERS = 5
"""Phrase words shorter than this match only exactly: one edit from "okay" or "cool" is
too often a real word."""

_EMOTICON = re.compile(
    r"(?<!\w)(?:[:;=][-'^o]?[()\[\]dpo3/\\|*>x@$]+|[()][-'^]?[:;=]|</?3+|\^[_.\-]?\^"
    r"|[t;][_.][t;]|o[_.]o|-_+-|\(y\))(?!\w)"
)
_LAUGHTER = re.compile(
    r"a*(?:h+[aeiou]+){2,}h*|a?h+a+h*|(?:j+[aeiou]+){2,}j*|(?:rs)+|k+|(?:wk)+w*|x+d+|w+"
    r"|l+[ou]+l+(?:[ou]+l+)*z?|lmf?a+o+|rofl|kek|mdr+|ptdr+|jsjs"
    r"|а*(?:х+[аеи]+){2,}х*|ахах|лол|[ㅋㅎㅠㅜ]+|ه+|خ+|(?:ह[ाी]?){2,}"  # noqa: RUF001
)  # Latin, Cyrillic, Hangul, Arabic and Devanagari laughter, letter runs already shortened
_RUN = re.compile(r"(.)\1{2,}")
_DOUBLE = re.compile(r"(.)\1")
_NUMERIC_LAUGHTER = re.compile(r"23{3,}|5{3,}")
"""2333 (Chinese), 555 (Thai): only as typed, since a number is otherwise content."""
_UNSPACED = (
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x1000, 0x109F),  # Myanmar
    (0x1780, 0x17FF),  # Khmer
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
)
_ELONGATION = str.maketrans("", "", "ー〜")
"""Japanese vowel lengthening ("ありがとー"); NFKC has already folded the half-width forms."""
_STRIPPED_MARKS_BELOW = 0x0900
"""Combining marks on a letter below Devanagari (Latin, Greek, Cyrillic, Hebrew, Arabic) are
accents and vowel points a user may or may not type; in Indic and Japanese scripts they are
part of the letter."""


@dataclass(frozen=True)
class PhaticLexicon:
    """The normalised phrases, the words they are made of, and those words' near misses."""

    phrases: frozenset[tuple[str, ...]]
    longest: int
    words: frozenset[str]
    near_misses: dict[str, str]


@lru_cache(maxsize=256)
def is_phatic(text: str) -> bool:
    """Whether `text` is small talk: only greetings, thanks, acknowledgements, laughter,
    farewells, fillers, reactions, emoji or punctuation (an empty text is not). Memoised: one
    recall asks about its query more than once."""
    if not text.strip() or len(text) > MAX_CHARS:
        return False
    units = [_corrected(unit) for unit in units_of(text)]
    return _segments(units, lexicon())


def units_of(text: str) -> list[str]:
    """`text` as matching units: normalised words, and single characters of scripts written
    without spaces; emoji, emoticons, punctuation and typed laughter are dropped."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    folded = _EMOTICON.sub(" ", folded)
    words = _letters_only(_unaccented(folded))
    units: list[str] = []
    for word in words.translate(_ELONGATION).split():
        if _NUMERIC_LAUGHTER.fullmatch(word):
            continue
        units.extend(_split_unspaced(_shortened(word)))
    return [u for u in units if not _LAUGHTER.fullmatch(u)]


@lru_cache(maxsize=1)
def lexicon() -> PhaticLexicon:
    """The packaged phrase list, normalised as messages are."""
    data = resources.files("recollect.longterm").joinpath(PHRASES_FILE)
    raw = json.loads(data.read_text("utf-8"))
    phrases = frozenset(
        tuple(units)
        for language, entries in raw.items()
        if language != "_"
        for entry in entries
        if (units := units_of(entry))
    )
    words = frozenset(word for phrase in phrases for word in phrase)
    near: dict[str, str] = {}
    for word in sorted(words):
        if len(word) >= TYPO_MIN_LETTERS:
            for miss in [*_deletions(word), *_transpositions(word)]:
                if miss not in words:
                    near.setdefault(miss, word)
    return PhaticLexicon(phrases, max(map(len, phrases)), words, near)


def _segments(units: list[str], lex: PhaticLexicon) -> bool:
    """Whether `units` split wholly into phrases (none: only emoji and punctuation)."""
    reachable = [True] + [False] * len(units)
    for start in range(len(units)):
        if not reachable[start]:
            continue
        for end in range(start + 1, min(len(units), start + lex.longest) + 1):
            if tuple(units[start:end]) in lex.phrases:
                reachable[end] = True
    return reachable[-1]


def _corrected(unit: str) -> str:
    """The phrase word `unit` stands for: itself, itself with doubled letters single
    ("thankss", "okk"), or the word it is a typo of (one transposition, deletion or insertion,
    in words of five letters or more); else `unit`."""
    lex = lexicon()
    if unit in lex.words:
        return unit
    single = _single(unit)
    if single in lex.words:
        return single
    for typed in dict.fromkeys((unit, single)):
        if len(typed) < TYPO_MIN_LETTERS:
            continue
        if typed in lex.near_misses:
            return lex.near_misses[typed]
        for shorter in _deletions(typed):  # the user typed one letter too many
            if len(shorter) >= TYPO_MIN_LETTERS and shorter in lex.words:
                return shorter
    return unit


def _unaccented(text: str) -> str:
    base = 0
    kept = []
    for c in unicodedata.normalize("NFD", text):
        if unicodedata.category(c) == "Mn" and base < _STRIPPED_MARKS_BELOW:
            continue
        if unicodedata.category(c)[0] != "M":
            base = ord(c)
        kept.append(c)
    return unicodedata.normalize("NFC", "".join(kept))


def _letters_only(text: str) -> str:
    """Letters, digits and the marks on them; anything else (punctuation, symbols, emoji with
    their variation selectors and joiners) becomes a space."""
    kept = []
    letter = False
    for c in text:
        kind = unicodedata.category(c)[0]
        letter = kind in "LN" or (kind == "M" and letter)
        kept.append(c if letter else " ")
    return "".join(kept)


def _shortened(word: str) -> str:
    """Runs of three or more of one letter as two ("thanksss", "okkk", "gooood"): a run is
    emphasis, while a double may spell the word ("good", "toll")."""
    return _RUN.sub(r"\1\1", word)


def _single(word: str) -> str:
    """Every doubled letter as one: tried only when the word itself is not a phrase word."""
    return _DOUBLE.sub(r"\1", word)


def _split_unspaced(word: str) -> list[str]:
    out: list[str] = []
    run = ""
    for c in word:
        if any(low <= ord(c) <= high for low, high in _UNSPACED):
            if run:
                out.append(run)
                run = ""
            out.append(c)
        else:
            run += c
    return [*out, run] if run else out


def _deletions(word: str) -> list[str]:
    return [word[:i] + word[i + 1 :] for i in range(len(word))]


def _transpositions(word: str) -> list[str]:
    return [word[:i] + word[i + 1] + word[i] + word[i + 2 :] for i in range(len(word) - 1)]
