"""Which language a text is in, so an English-only reranker reranks only what it can read.

py3langid (a maintained fork of langid.py; its model ships inside the wheel, numpy only, about
0.1 ms a query) names the language, chosen among `CANDIDATES`, the widely written languages:
over all 97 of its languages, short English questions were sometimes named Nigerian Pidgin or
Latin (11 of 1,157 LoCoMo questions); over these none were, and ten short German questions were
all named German.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

CANDIDATES = (
    "en", "de", "fr", "es", "it", "pt", "nl", "sv", "da", "no", "fi", "pl", "cs", "ru", "uk",
    "tr", "ar", "he", "hi", "ja", "zh", "ko", "vi", "id", "el", "hu", "ro",
)  # fmt: skip
_MAX_CHARS = 512
"""Detection reads the start of a text only."""


@lru_cache(maxsize=1)
def _identifier() -> Any:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    identifier.set_languages(list(CANDIDATES))
    return identifier


def language_of(text: str) -> str:
    """The most likely ISO 639-1 code among `CANDIDATES`."""
    return _language_of_start(text[:_MAX_CHARS])


@lru_cache(maxsize=256)
def _language_of_start(start: str) -> str:
    """Memoised: one recall asks about its query several times (planning, then ranking facts
    and episodes), and the agent's own search often repeats the turn's query."""
    lang, _ = _identifier().classify(start)
    return str(lang)


def reads_as(text: str, languages: frozenset[str]) -> bool:
    """True when `text` is in one of `languages` (an empty text reads as any)."""
    return not text.strip() or language_of(text) in languages
