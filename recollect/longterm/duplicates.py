"""When a new fact is the same fact as a stored one, measured per embedder and never on the
embedding alone.

Two tests must both pass before a fact is treated as a repeat (reinforced on write, merged by
compaction), because a wrong merge loses a fact while a missed one only costs a duplicate row:

1. Cosine similarity at or above the embedder's own threshold. Embedders spread similarities
   very differently: all-MiniLM-L6-v2 puts unrelated facts near 0.2, multilingual-e5-small
   near 0.83. An embedder states its measured value in a `near_duplicate_similarity`
   attribute; one that does not gets `UNKNOWN_EMBEDDER_SIMILARITY`.
2. Words, independent of any embedder: the new fact's content words (lower-cased, stop words
   dropped, crudely stemmed) must all appear in the old fact (`WORD_COVERAGE`), names
   included; their numbers must be equal; and both must be negated (or ended: "used to")
   or neither. A restatement may drop detail the old fact has, never add its own.

Calibration (`python -m bench.duplicates`, offline multilingual-e5-small): 40 hand-written
paraphrase pairs tried in both orders (80 trials); 22 near misses (a negation, another number,
name or value, an added fact); and the write path replayed over the 1,487 LoCoMo observations
of six conversations (each compared with its five nearest kept ones). Unrelated observations
of one conversation have a median cosine of 0.83 (99th percentile 0.93); paraphrases 0.96
(minimum 0.91). Share merged, cosine and equal numbers alone / with the word test:

| cosine >= | paraphrase trials | near misses | LoCoMo observations merged away |
| --- | --- | --- | --- |
| 0.92 (the old rule) | 92.5% / 58.8% | 63.6% / 0% | 43.0% (640) / 0.3% (5) |
| 0.93 | 85.0% / 55.0% | 54.5% / 0% | 31.3% / 0.3% |
| **0.94** (e5's value) | 77.5% / 48.8% | 36.4% / 0% | 20.4% (304) / 0.3% (5) |
| 0.95 (unknown embedders) | 65.0% / 40.0% | 27.3% / 0% | 11.1% / 0.3% |

Without the word test no threshold is safe (near misses reach 0.97); with it, the cosine
mostly trades paraphrase recall. 0.94 sits above the 99th percentile of unrelated pairs and
above both LoCoMo pairs that motivated this (0.936, 0.924). Of the five LoCoMo observations
it still folds, three restate an earlier one ("Maria volunteers at a homeless shelter.") and
two retell an earlier one from the other speaker's side. Requiring
all of the new fact's words (`WORD_COVERAGE = 1.0`) rather than four in five costs no
paraphrase here and cuts those LoCoMo merges from 21 to 5.

all-MiniLM-L6-v2 (`--embeddings minilm`) spreads wider: unrelated pairs median 0.36, 99.9th
percentile 0.86, paraphrases median 0.82. With the word test, 0.85 reinforces 18.8% of the
paraphrase trials (0.92: 8.8%) and folds 0.3% of LoCoMo, no near miss.
"""

from __future__ import annotations

import re

from recollect.models.embeddings import init_embeddings

UNKNOWN_EMBEDDER_SIMILARITY = 0.95
"""For an embedder nobody measured: high enough that the word test does the deciding."""
WORD_COVERAGE = 1.0
"""Share of the new fact's content words the old fact must contain."""
SIMILARITY_ATTRIBUTE = "near_duplicate_similarity"

_KANA_KANJI = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff"
_WORD = re.compile(rf"[^\W{_KANA_KANJI}]+|[{_KANA_KANJI}]+")
"""Runs of letters and digits, split where Japanese or Chinese script meets another: those
languages leave no space before a product name or a number ("Netflixを解約した")."""
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_NOT = re.compile(r"n['\u2019]t\b")
_USED_TO = re.compile(r"\bused to\b")
_SUFFIXES = ("ing", "ed", "es", "s", "ly")
POLARITY = frozenset({"not", "no", "never", "nor", "none", "nothing", "nobody", "neither",
                      "without", "cannot", "used_to", "former", "formerly", "previously",
                      "anymore", "stopped", "quit", "ex"})  # fmt: skip
"""Words that turn a statement around (negation, a state that ended): both facts carry the
same ones or neither is a repeat ("likes coffee" vs "does not like coffee": cosine 0.92)."""
_STOP_TEXT = """
    a an the and or but if then than so as of at by for from in into on onto to with about
    over under after before during since until up down out off again also too very just
    i me my mine we us our ours you your yours he him his she her hers it its they them their
    theirs this that these those who whom whose which what when where why how there here
    is am are was were be been being has have had having do does did doing will would shall
    should can could may might must
    user users person someone some any all each every both other such own same
    use uses using now currently today still really actually recently
    s t d ll m re ve
"""
STOP_WORDS = frozenset(_STOP_TEXT.split())
"""English function words, plus words extraction models add to a fact without changing it:
"The user likes X" is "Likes X"; "uses React 16 today" is "React 16"."""


def near_duplicate_similarity(embedder: object | None) -> float:
    """The cosine at which this embedder's vectors may mean the same fact."""
    value = getattr(embedder, SIMILARITY_ATTRIBUTE, None)
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 < value <= 1:
        return float(value)
    return UNKNOWN_EMBEDDER_SIMILARITY


def numbers(text: str) -> frozenset[str]:
    """Versions, amounts and dates: a change in any of them is a change of value."""
    return frozenset(_NUMBER.findall(text))


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def _words(text: str) -> list[str]:
    return _WORD.findall(_USED_TO.sub("used_to", _NOT.sub(" not", text.lower())))


def content_words(text: str) -> frozenset[str]:
    """The words that carry a fact: no stop words, no polarity words (checked apart), stemmed."""
    return frozenset(_stem(w) for w in _words(text) if w not in STOP_WORDS and w not in POLARITY)


def polarity(text: str) -> frozenset[str]:
    """The words that say something is not, or no longer, so."""
    return frozenset(w for w in _words(text) if w in POLARITY)


def names(text: str) -> frozenset[str]:
    """Capitalised content words (people, places, products), stemmed like the rest."""
    return frozenset(
        _stem(w.lower())
        for w in _WORD.findall(text)
        if w[:1].isupper() and w.lower() not in STOP_WORDS and w.lower() not in POLARITY
    )


def word_coverage(new: str, old: str) -> float:
    """Share of `new`'s content words found in `old` (1.0 when `new` has none)."""
    words = content_words(new)
    if not words:
        return 1.0
    return len(words & content_words(old)) / len(words)


def says_nothing_new(new: str, old: str, *, coverage: float = WORD_COVERAGE) -> bool:
    """The embedder-independent half: `new` restates `old` without a word of its own that
    matters (a number, a name, a negation) and with few others."""
    old_words = content_words(old)
    return (
        numbers(new) == numbers(old)
        and polarity(new) == polarity(old)
        and names(new) <= old_words
        and word_coverage(new, old) >= coverage
    )


def is_repeat(
    new: str,
    old: str,
    similarity: float | None,
    threshold: float,
    *,
    coverage: float = WORD_COVERAGE,
) -> bool:
    """Both halves: the embedding is close enough and the words add nothing."""
    return (
        similarity is not None
        and similarity >= threshold
        and says_nothing_new(new, old, coverage=coverage)
    )


def configured_near_duplicate_similarity() -> float:
    """The threshold for the configured embedder (`RECOLLECT_EMBEDDINGS`): what compaction
    uses, since it compares vectors that embedder wrote."""
    return near_duplicate_similarity(init_embeddings())
