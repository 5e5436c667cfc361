"""Words that say how a statement relates to what was known before, in several languages.

A new statement may replace a value ("now", "these days", "switched", "jetzt", "maintenant",
"ahora", "agora", "adesso", "今は"), take one back ("forget that", "turns out not", "no longer"),
correct a slip ("X, not Y", "I meant"), add to a list ("also", "auch", "aussi", "también"), or
announce a plan that has not happened yet ("next month", "in September", "will", "werde",
"vais", "voy a", "vou", "andrò", "来月"). The supersession rule and the offline judge read these
cues; they never decide alone which old fact is meant (that takes a shared subject or word).
Languages covered: English, German, French, Spanish, Portuguese, Italian, Japanese.
"""

from __future__ import annotations

import re


def _any(*alternatives: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{a})" for a in alternatives), re.IGNORECASE)


CHANGE = _any(
    # English
    r"\bnow\b", r"\bthese days\b", r"\bnowadays\b", r"\bthis days\b", r"\bcurrently\b",
    r"\bswitched\b", r"\bswapped\b", r"\bchanged\b", r"\bmoved\b", r"\brelocated\b",
    r"\bno longer\b", r"\bany ?more\b", r"\binstead\b", r"\brather than\b", r"\bused to\b",
    r"\breplaced\b", r"\bstopped\b", r"\bquit\b", r"\bgave up\b", r"\bsold\b", r"\bnew\b",
    r"\bnot .* but\b", r"\bfrom now on\b", r"\bthe latest\b",
    # German
    r"\bjetzt\b", r"\binzwischen\b", r"\bmittlerweile\b", r"\bnun\b", r"\bneu\w*\b",
    r"\bnicht mehr\b", r"\bkein\w* .*\bmehr\b", r"\bgewechselt\b", r"\bumgestiegen\b",
    r"\bgezogen\b", r"\bstatt\b", r"\banstatt\b", r"\bseit kurzem\b", r"\bnur noch\b",
    # French
    r"\bmaintenant\b", r"\bdésormais\b", r"\bdorénavant\b", r"\bactuellement\b",
    r"\bces temps-ci\b", r"\bne \w+ plus\b", r"\bn'\w+ plus\b", r"\bau lieu de\b",
    r"\bchangé\b", r"\bpassé à\b", r"\bdéménagé\b", r"\bnouve(au|l|lle)\b",
    # Spanish
    r"\bahora\b", r"\bya no\b", r"\bactualmente\b", r"\bhoy en día\b", r"\bestos días\b",
    r"\bcambi[óé]\b", r"\bse mudó\b", r"\ben lugar de\b", r"\ben vez de\b", r"\bdejó de\b",
    r"\bnuev[oa]\b",
    # Portuguese
    r"\bagora\b", r"\batualmente\b", r"\bhoje em dia\b", r"\bjá não\b", r"\bnão \w+ mais\b",
    r"\bmudou\b", r"\btrocou\b", r"\bem vez de\b", r"\bdeixou de\b", r"\bnov[oa]\b",
    # Italian
    r"\bora\b", r"\badesso\b", r"\bormai\b", r"\battualmente\b", r"\bnon \w+ più\b",
    r"\bcambiato\b", r"\btrasferit[oa]\b", r"\binvece di\b", r"\bnuov[oa]\b",
    # Japanese (no word boundaries)
    r"今は", r"今では", r"現在", r"最近", r"変えた", r"変更", r"乗り換え", r"引っ越し",
    r"もう.*ない", r"新しい",
)  # fmt: skip
"""A value changed or ended: the new statement may replace an old one of the same slot."""

RETRACTION = _any(
    r"\bforget (that|about)\b", r"\bignore (that|what)\b", r"\bturns out\b.*\bnot\b",
    r"\bnot\b.*\bafter all\b", r"\bnever (had|was|were|did)\b", r"\bno longer\b",
    r"\bnot .*\bany ?more\b", r"\bstopped\b", r"\bquit\b", r"\bcancel+ed\b", r"\bgave up\b",
    r"\bvergiss\b", r"\bnicht mehr\b", r"\bdoch nicht\b", r"\bgekündigt\b",
    r"\b(herausgestellt|stellt sich heraus)\b.*\bdoch\b", r"\bresulta que no\b",
    r"\ben realidad no\b", r"\bna verdade não\b", r"\bin realtà non\b",
    r"\boublie(z)?\b", r"\bne \w+ plus\b", r"\bn'\w+ plus\b", r"\bfinalement pas\b", r"\brésilié\b",
    r"\bolvida\b", r"\bya no\b", r"\bal final no\b", r"\bcancel[óé]\b", r"\bdejó de\b",
    r"\besquece\b", r"\bjá não\b", r"\bnão \w+ mais\b", r"\bcancelou\b", r"\bdeixou de\b",
    r"\bdimentica\b", r"\bnon \w+ più\b", r"\bdisdetto\b", r"\bcancellato\b",
    r"忘れて", r"やめた", r"解約", r"もう.*ない",
)  # fmt: skip
"""A value taken back: the old fact ends and the statement itself states nothing new."""

REPLACEMENT = _any(
    r"\b(switched|moved|changed|migrated) (from|to)\b", r"\binstead\b", r"\bnow\b",
    r"\bjetzt\b", r"\bmaintenant\b", r"\bahora\b", r"\bagora\b", r"\badesso\b", r"\bora\b",
    r"\bstatt\b", r"\bau lieu de\b", r"\ben (lugar|vez) de\b", r"\bem vez de\b",
    r"\binvece di\b", r"\band\b.*\b(drives|uses|has|lives|works)\b", r"今は",
)  # fmt: skip
"""Inside a retraction, words that bring a new value along ("stopped X and now Y")."""

PURE_RETRACTION_HEAD = _any(
    r"^\s*(please )?(forget|ignore) (that|about)\b", r"^\s*turns out\b", r"\bafter all\b",
    r"^\s*(vergiss|oublie|olvida|esquece|dimentica)\b", r"^\s*忘れて", r"忘れて",
    r"^\s*(no longer|not .*\bany ?more|never (had|was))\b", r"^\s*(stopped|quit|cancel+ed)\b",
    r"^\s*(ya no|já não|nicht mehr)\b", r"\b(doch nicht|finalement pas|al final no)\b",
    r"^\s*(resulta que no|en realidad no|na verdade não|in realtà non)\b",
    r"\b(herausgestellt|stellt sich heraus)\b.*\bdoch\b",
)  # fmt: skip
"""Retractions whose statement is only the taking back, never a fact of its own."""

CORRECTION = _any(
    r"\bI meant\b", r"\bI mean\b", r", (not|nicht|pas|no|não|non)\b", r"\bactually\b",
    r"\bcorrection\b", r"\beigentlich\b", r"\ben fait\b", r"\ben realidad\b",
    r"\bna verdade\b", r"\bin realtà\b",
    r"\bich meinte\b", r"\bje voulais dire\b", r"\bquise decir\b", r"\bquis dizer\b",
    r"\bintendevo\b", r"\bnicht\b.*\bsondern\b", r"\bpas\b.*\bmais\b", r"\bno\b.*\bsino\b",
    r"\bnão\b.*\bmas\b", r"\bnon\b.*\bma\b", r"ではなく", r"ではない", r"じゃなくて",
)  # fmt: skip
"""A slip put right: the new statement replaces the one it corrects, whatever its kind."""

ADDITION = _any(
    r"\balso\b", r"\btoo\b", r"\bas well\b", r"\banother\b", r"\badditionally\b",
    r"\bauch\b", r"(?<!\bnur )\bnoch\b", r"\baussi\b", r"\bégalement\b", r"\btambién\b",
    r"\btambém\b", r"\banche\b", r"も",
)  # fmt: skip
"""One more value beside the others: nothing is replaced."""

PLAN = _any(
    r"\bnext (week|month|year|spring|summer|autumn|fall|winter)\b", r"\bwill\b",
    r"\bgoing to\b", r"\bplans? to\b", r"\babout to\b", r"\bsoon\b", r"\bupcoming\b",
    r"\b(in|from|starting) (january|february|march|april|may|june|july|august|september|"
    r"october|november|december)\b",
    r"\bnächste[nmr]?\b", r"\bwerde\b", r"\bwird\b", r"\bab (januar|februar|märz|april|mai|"
    r"juni|juli|august|september|oktober|november|dezember)\b",
    r"\bprochaine?\b", r"\bvais\b", r"\bva\b \w+er\b", r"\ben (janvier|février|mars|avril|mai|"
    r"juin|juillet|septembre|octobre|novembre|décembre)\b",
    r"\bpróxim[oa]\b", r"\bvoy a\b", r"\bva a\b", r"\bvou\b", r"\bvai\b", r"\bem (janeiro|"
    r"fevereiro|março|abril|maio|junho|julho|agosto|setembro|outubro|novembro|dezembro)\b",
    r"\bprossim[oa]\b", r"\bandrò\b", r"\binizierò\b", r"\bfarò\b", r"\ba (settembre|ottobre|"
    r"novembre|dicembre|gennaio|febbraio|marzo|aprile|maggio|giugno|luglio|agosto)\b",
    r"来月", r"来年", r"来週", r"予定", r"つもり",
)  # fmt: skip
"""The statement is about a future that has not begun: it ends nothing yet."""


def says_change(text: str) -> bool:
    """The statement says a value changed or ended."""
    return bool(CHANGE.search(text) or RETRACTION.search(text) or CORRECTION.search(text))


def says_addition(text: str) -> bool:
    """The statement adds one more value ("also", "auch", "too")."""
    return bool(ADDITION.search(text))


def says_plan(text: str) -> bool:
    """The statement is about something planned, not yet true."""
    return bool(PLAN.search(text)) and not RETRACTION.search(text)


def says_retraction(text: str) -> bool:
    """The statement takes a value back."""
    return bool(RETRACTION.search(text))


def only_retracts(text: str) -> bool:
    """The statement takes a value back and brings no new value of its own: it ends the old
    fact and is kept as a record of that, never as a fact ("Forget that I have a cat")."""
    return (
        bool(RETRACTION.search(text))
        and bool(PURE_RETRACTION_HEAD.search(text))
        and not REPLACEMENT.search(text)
    )
