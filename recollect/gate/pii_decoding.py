"""PII written so a pattern misses it, read back into plain form before the detectors run.

`ana&#64;example.com`, `ana%40example.com`, `ana_at_example_dot_com`, `ana #at# example #dot#
com`; an SSN in words ("one two three, four five, …", in en/de/fr/es/pt/it/nl through
`text2num`) or with the letter O for a zero; a card in bracketed groups; keycap-emoji and
other-script digits; an IBAN written one character at a time. `decode` undoes each of these in
turn; redaction reads the decoded text when it finds more there than in the text as written.
"""

# ruff: noqa: RUF001  (look-alike characters are what these rules are about)
from __future__ import annotations

import html
import re
import unicodedata
from urllib.parse import unquote

from text_to_num import alpha2digit

from recollect.gate.phone_words import PHONE_WORDS
from recollect.gate.pii_context import words_before

__all__ = ["decode"]

_ESCAPED = re.compile(r"&#?\w+;|%[0-9A-Fa-f]{2}")
_KEYCAP = re.compile("[\ufe0f\u20e3]")
_NON_ASCII_DIGIT = re.compile(r"[^\x00-\x7f]")

_SEP = r"[\s_#*~|:\-]+"
_AT_WORDS = (
    r"at|arroba|arobase|chez|chiocciola|snabel-?a|ma[łl]pa|zavin[áa][čc]|kukac|собака|παπάκι|@"
)
"""The at sign said aloud: en, es/pt, fr, it, sv/da/no, pl, cs, hu, ru, el."""
_DOT_WORDS = r"dot|punkt|point|punto|ponto|kropka|te[čc]ka|pont|piste|prik|nokta|точка|τελεία|\.|·"
_SPELLED_EMAIL = re.compile(
    rf"(?i)(?<![\w.+-])(?P<local>[a-z0-9][a-z0-9._+]*?){_SEP}(?:{_AT_WORDS}){_SEP}"
    rf"(?P<domain>[a-z0-9]+(?:{_SEP}(?:{_DOT_WORDS}){_SEP}[a-z0-9]+)+)"
    r"(?![\w-])"
)
_DOT_SPELLED = re.compile(rf"(?i){_SEP}(?:{_DOT_WORDS}){_SEP}")
_SPACED_EMAIL = re.compile(r"(?<!\S)(?:[A-Za-z0-9._+\-]\s){1,64}@(?:\s[A-Za-z0-9.\-]){3,255}(?!\S)")
""""a n a @ e x a m p l e . c o m": an address typed one character at a time."""
_MIDDOT_DOMAIN = re.compile(r"@[A-Za-z0-9-]+(?:[.·][A-Za-z0-9-]+)*·[A-Za-z]{2,}")
""""ana@example·com": a middle dot for the domain's dot."""

_NUMBER_WORDS = {
    "en": "zero oh one two three four five six seven eight nine ten hundred thousand",
    "de": "null eins zwei drei vier fünf sechs sieben acht neun zehn hundert tausend",
    "fr": "zéro un deux trois quatre cinq six sept huit neuf dix cent mille",
    "es": "cero uno dos tres cuatro cinco seis siete ocho nueve diez cien ciento mil",
    "pt": "zero um dois três quatro cinco seis sete oito nove dez cem cento mil",
    "it": "zero uno due tre quattro cinque sei sette otto nove dieci cento mille",
    "nl": "nul een twee drie vier vijf zes zeven acht negen tien honderd duizend",
}
_WORDS_OF = {
    lang: re.compile(rf"(?i)(?<!\w)(?:{'|'.join(words.split())})(?!\w)")
    for lang, words in _NUMBER_WORDS.items()
}
_ENOUGH_WORDS = 4
"""Four number words of one language: fewer cannot spell a value worth redacting."""

_SPOKEN_ZERO = re.compile(r"(?i)(?<=\d)(\s+)(?:oh|o)(?=\s+\d)")
_BRACKETED_GROUP = re.compile(r"[(\[{<](\d{2,6})[)\]}>]")
_LOOKALIKE_RUN = re.compile(r"(?<![A-Za-z])[\dOoIl|]*\d[\dOoIl|]*(?![A-Za-z])")
_LOOKALIKE = str.maketrans({"O": "0", "o": "0", "I": "1", "l": "1", "|": "1"})
_SPACED_CHARS = re.compile(r"(?<![\w])(?:[A-Za-z0-9][ \u00a0·.\-]){7,}[A-Za-z0-9](?![\w])")
_DIGIT_CHAIN = re.compile(r"(?<![\w])\d+(?:(?:\s*[,\-–/]\s*|\s+)\d+){3,}(?![\w])")
_GROUP_BREAK = re.compile(r"\s*[,\-–/]\s*")


_CJK_NUMERALS = str.maketrans("〇零一二三四五六七八九", "00123456789")
_CJK_NUMERAL_RUN = re.compile(
    r"[〇零一二三四五六七八九](?:[・\-－ー\s]?[〇零一二三四五六七八九]){6,}"
)
"""Seven or more CJK numerals in a row, maybe grouped: a number written digit by digit
("〇九〇・一二三四・五六七八"), not a count ("三人")."""


def _digits(text: str) -> str:
    """Keycaps and digits of any script (Arabic-Indic, Devanagari, dingbat circles, CJK
    numerals written digit by digit) as ASCII."""
    text = _KEYCAP.sub("", text)
    text = _CJK_NUMERAL_RUN.sub(
        lambda m: re.sub("[・－ー]", "-", m.group(0).translate(_CJK_NUMERALS)), text
    )
    if not _NON_ASCII_DIGIT.search(text):
        return text
    return "".join(
        str(digit) if not c.isascii() and (digit := unicodedata.digit(c, None)) is not None else c
        for c in text
    )


def _email(match: re.Match[str]) -> str:
    return f"{match.group('local')}@{_DOT_SPELLED.sub('.', match.group('domain'))}"


_WORD_HYPHEN = re.compile(r"(?<=[^\W\d_])-(?=[^\W\d_])")
""""one-two-three": digits said one by one and hyphenated are separate numbers."""


def _number_words(text: str) -> str:
    for lang, words in _WORDS_OF.items():
        if len(words.findall(text)) >= _ENOUGH_WORDS:
            text = alpha2digit(_WORD_HYPHEN.sub(" ", text), lang)
    return _SPOKEN_ZERO.sub(r"\g<1>0", text)


def _join_chain(match: re.Match[str]) -> str:
    """ "1 2 3, 4 5, 6 7 8 9" → "123-45-6789": single digits said one by one are one group;
    so are pairs and triples said after a phone word ("numéro : 06, 12, 34, 56, 78")."""
    chain = match.group(0)
    groups = re.findall(r"\d+", chain)
    said_as_phone = words_before(match.string, match.start(), PHONE_WORDS, 30) and (
        7 <= sum(map(len, groups)) <= 15
    )
    if sum(len(g) == 1 for g in groups) * 2 < len(groups) and not said_as_phone:
        return chain
    return "-".join(re.sub(r"\s+", "", part) for part in _GROUP_BREAK.split(chain))


def decode(text: str) -> str:
    """`text` with each hiding scheme above undone (unchanged when none applies)."""
    if _ESCAPED.search(text):
        text = html.unescape(unquote(text))
    text = _digits(text)
    text = _SPACED_EMAIL.sub(lambda m: re.sub(r"\s", "", m.group(0)), text)
    text = _MIDDOT_DOMAIN.sub(lambda m: m.group(0).replace("·", "."), text)
    text = _SPELLED_EMAIL.sub(_email, text)
    text = _number_words(text)
    text = _BRACKETED_GROUP.sub(r"\1", text)
    text = _LOOKALIKE_RUN.sub(lambda m: m.group(0).translate(_LOOKALIKE), text)
    text = _SPACED_CHARS.sub(lambda m: re.sub(r"[ \u00a0·.\-]", "", m.group(0)), text)
    return _DIGIT_CHAIN.sub(_join_chain, text)
