"""Credentials said in words, in the languages `password_phrases` does not read: Japanese,
Chinese, Korean, Russian, Ukrainian, Polish, Czech, Slovak, Turkish, Vietnamese, Indonesian,
Malay, Swedish, Danish, Norwegian, Finnish, Hungarian, Romanian, Greek, Hebrew, Arabic,
Persian, Hindi, Bengali, Thai, Swahili.

Their grammar puts particles, suffixes and copulas where English has "is" ("パスワードは…",
"şifrem …", "salasanani on …", "मेरा पासवर्ड … है"), so instead of one copula per language the
rule reads a password word, a short stretch of words, then a value that looks made up: letters
with digits or symbols, or a run of four or more digits close after the word. Talk about
passwords ("パスワードを忘れた", "hasło musi mieć 12 znaków", "비밀번호를 2023년에 바꿨다") gives
no such value, or a count with its unit.
"""

# ruff: noqa: RUF001  (the words of many scripts are what this rule reads)
from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from recollect.gate.script_seams import SEAM, open_seams

_WORDS = (
    r"パスワード|暗証番号|パスコード|合言葉|"  # ja
    r"密码|密碼|口令|"  # zh
    r"비밀번호|비번|암호|패스워드|핀번호|"  # ko
    r"парол\w*|пин-?\s?код\w*|код\s+доступа|"  # ru, uk
    r"has[łl]\w*|kod\s+pin|hesl\w*|"  # pl, cs, sk
    r"şifre\w*|sifre\w*|parola\w*|"  # tr, ro
    r"mật\s+khẩu|mã\s+pin|"  # vi
    r"kata\s+sandi\w*|sandi\w*|kata\s+laluan|"  # id, ms
    r"lösenord\w*|adgangskode\w*|passord\w*|kodeord\w*|pinkod\w*|"  # sv, da, no
    r"salasan\w*|tunnusluku\w*|pin-?koodi\w*|"  # fi
    r"jelsz[óa]\w*|"  # hu
    r"κωδικ\w*|συνθηματικ\w*|"  # el
    r"\S?סיסמ\S*|"  # he
    r"كلمة\s+(?:المرور|السر)|الرقم\s+السري|رمز\s+(?:المرور|الدخول)|"  # ar
    r"رمز\s+عبور|گذرواژه|"  # fa
    r"पासवर्ड|पिन|कूटशब्द|পাসওয়ার্ড|"  # hi, bn
    r"รหัสผ่าน|รหัส\s?pin|"  # th
    r"nenosiri|nywila"  # sw
)
_WORD = re.compile(rf"(?i){_WORDS}")
_TOKEN = re.compile(rf"[^\s{SEAM}，、；]+")
_SENTENCE_END = re.compile(r"[.!?。！？\n](?:\s|$)|[。！？\n]")
_MANAGER = re.compile(
    r"(?i)\s*(?:관리|管理|マネージャ|マネジャ|менеджер|manager|menedżer|manažer|yönetici|"
    r"hanterare|håndtering|hallinta|kezelő|διαχειρ|מנהל|مدير|مدیریت|प्रबंधक|ตัวจัดการ)"
)
"""A password manager is a program, so what follows is not a password."""
_REACH = 28
"""Characters after the word where its value may begin."""
_NEAR = 12
"""Characters between the word and a bare run of digits: a particle or a copula, not a clause."""
_DIGITS = re.compile(r"\d{4,12}")
_ASCII = re.compile(r"[A-Za-z0-9]")
"""A value holds some ASCII letter or digit: what people type into a password box."""
_MADE_UP_LENGTH = 6
"""Shortest value of letters with digits or symbols ("90:e" is an ordinal, "Kot#24" a password)."""
_ADDRESS = re.compile(r"[\w.+-]+@[\w-]+\.\w{2,}|https?://|www\.")
_LEADING = ":：=-—–(\"'«“„「『"
_TRAILING = ".,;:!?)]}\"'»”。、！？」』"
_COPULA_HEADS = "でだ입이야에은는是为為"
"""What may follow a bare digit run glued to it ("4921です", "602913이야"): a copula, not a
unit as in "2023年" or "8位"."""


def _counts(value: str, distance: int, after: str) -> bool:
    if len(value) < 4 or len(value) > 64 or _ADDRESS.search(value) or not _ASCII.search(value):
        return False
    if _DIGITS.fullmatch(value):
        unit = after.isalpha() and after not in _COPULA_HEADS
        return distance <= _NEAR and not unit
    if re.fullmatch(r"\d+['’][^\W\d_]+", value):  # "2019'dan": a year with its suffix
        return False
    return len(value) >= _MADE_UP_LENGTH and _made_up(value)


def _made_up(value: str) -> bool:
    """Letters with digits, or a symbol among letters or digits; a vowel sign of Devanagari or
    Thai is part of a letter, not a symbol."""
    kinds = {unicodedata.category(c)[0] for c in value}
    has_letter, has_digit = "L" in kinds, any(c.isdigit() for c in value)
    has_symbol = bool(kinds & {"P", "S"})
    return (has_letter and has_digit) or (has_symbol and (has_letter or has_digit))


def find(text: str) -> Iterable[tuple[int, int, str]]:
    """(start, end, "password") for the first value after each password word that looks like
    one, as offsets into `text` itself."""
    seamed = text if SEAM in text else open_seams(text)
    for word in _WORD.finditer(seamed):
        if _MANAGER.match(seamed, word.end()):
            continue
        window = seamed[word.end() : word.end() + _REACH + 64]
        if stop := _SENTENCE_END.search(window):
            window = window[: stop.start()]
        for token in _TOKEN.finditer(window):
            if token.start() > _REACH:
                break
            raw = token.group(0)
            lead = len(raw) - len(raw.lstrip(_LEADING))
            value = raw[lead:].rstrip(_TRAILING)
            after = window[token.end() :].lstrip(SEAM)[:1]
            if _counts(value, token.start() + lead, after):
                start = word.end() + token.start() + lead
                yield (
                    _unseamed(seamed, text, start),
                    _unseamed(seamed, text, start + len(value)),
                    "password",
                )
                break


def _unseamed(seamed: str, text: str, offset: int) -> int:
    """An offset into the seamed text, as an offset into `text`."""
    return offset if seamed is text else offset - seamed.count(SEAM, 0, offset)
