"""National identity numbers, each taken only when its format and check digit hold.

US SSN (any separator), UK NINO, German Steuer-ID, French NIR, Spanish DNI/NIE, Italian
codice fiscale, Dutch BSN and Canadian SIN (both only when named: nine digits pass their
check one time in ten), Indian Aadhaar, Brazilian CPF, Polish PESEL, Turkish identity number,
Russian SNILS, Chinese resident id; and a passport number wherever the words before name a
passport (no check digit to lean on, so only then).
"""

# ruff: noqa: RUF001  (look-alike characters are what these rules are about)
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

from recollect.gate import checksums
from recollect.gate.pii_context import named_reference, words_before
from recollect.gate.script_seams import SEAM

Validator = Callable[[str], bool]

SEP = r"[\s\-./_–—]{0,3}"

SSN = re.compile(
    r"(?<![\d\w])(?!000|666|9\d\d)\d{3}(\s*[\-./_–—]\s*|\s+)(?!00)\d{2}\1(?!0000)\d{4}(?![\d\w])"
)
NINE_DIGITS = re.compile(rf"(?<![\d\w])\d{{3}}{SEP}\d{{2,3}}{SEP}\d{{3,4}}(?![\d\w])")
SSN_NAMED = re.compile(
    r"(?i)(?:\bssn|social\s+security|sozialversicherung|itin|taxpayer\s+id)\w*\W{0,20}$"
)
BSN_NAMED = re.compile(
    r"(?i)(?:\bbsn|burgerservicenummer|sofi-?nummer|citizen\s+service)\W.{0,20}$"
)
SIN_NAMED = re.compile(r"(?i)(?:\bsin\b|social\s+insurance|\bnas\b|assurance\s+sociale).{0,20}$")
NINO = re.compile(
    r"(?<![\w])(?!BG|GB|NK|KN|TN|NT|ZZ)[A-CEGHJ-TW-Z][A-CEGHJ-NPQR-TW-Z]\s?\d{2}\s?\d{2}\s?"
    r"\d{2}\s?[A-D](?![\w])",
    re.IGNORECASE,
)
NIR = re.compile(
    r"(?<![\w])[12]\s?\d{2}\s?(?:0[1-9]|1[0-2]|[2-9]\d)\s?(?:\d{2}|2[AB])\s?\d{3}\s?\d{3}\s?"
    r"\d{2}(?![\w])",
    re.IGNORECASE,
)
DNI = re.compile(r"(?<![\w])(?:\d{8}|[XYZ][\s-]?\d{7})[\s-]?[A-Z](?![\w])", re.IGNORECASE)
CODICE_FISCALE = re.compile(
    r"(?<![\w])[A-Z]{3}\s?[A-Z]{3}\s?[0-9LMNPQRSTUV]{2}[A-EHLMPR-T][0-9LMNPQRSTUV]{2}\s?[A-Z]"
    r"[0-9LMNPQRSTUV]{3}\s?[A-Z](?![\w])",
    re.IGNORECASE,
)
CHINA_ID = re.compile(r"(?<![\w])\d{6}\s?\d{8}\s?\d{3}[\dX](?![\w])", re.IGNORECASE)
DIGIT_RUN = re.compile(rf"(?<![\d\w])\d(?:{SEP}\d){{10,11}}(?![\d\w])")
"""Eleven or twelve digits with any separators: Steuer-ID, CPF, PESEL, Turkish identity number,
SNILS, Aadhaar."""


def _compact(text: str) -> str:
    return re.sub(r"[\W_]", "", text)  # any script's digits: int() reads them all


def _steuer_id(digits: str) -> bool:
    counts = Counter(digits[:10]).values()
    repeated = [c for c in counts if c > 1]
    return len(repeated) == 1 and repeated[0] in (2, 3) and checksums.steuer_id_valid(digits)


def _pesel(digits: str) -> bool:
    month, day = int(digits[2:4]) % 20, int(digits[4:6])
    return 1 <= month <= 12 and 1 <= day <= 31 and checksums.pesel_valid(digits)


def _aadhaar(digits: str) -> bool:
    return digits[0] not in "01" and checksums.verhoeff_valid(digits)


def _long_number(match: re.Match[str]) -> str | None:
    """The kind of an 11- or 12-digit run, or None when no checksum holds."""
    digits = _compact(match.group(0))
    if len(digits) == 12:
        return "aadhaar" if _aadhaar(digits) else None
    for kind, valid in (
        ("steuer_id", _steuer_id),
        ("cpf", checksums.cpf_valid),
        ("pesel", _pesel),
        ("tc_kimlik", checksums.tc_kimlik_valid),
        ("snils", checksums.snils_valid),
    ):
        if valid(digits):
            return kind
    return None


def _nine_digits(match: re.Match[str]) -> str | None:
    """Nine digits are an SSN, BSN or SIN only when the words before name one."""
    digits = _compact(match.group(0))
    if len(digits) != 9:
        return None
    text, start = match.string, match.start()
    if words_before(text, start, SSN_NAMED):
        return "ssn"
    if words_before(text, start, BSN_NAMED) and checksums.bsn_valid(digits):
        return "bsn"
    if words_before(text, start, SIN_NAMED) and checksums.luhn_valid(digits):
        return "sin"
    return None


def _checked(kind: str, valid: Validator) -> Callable[[re.Match[str]], str | None]:
    def classify(match: re.Match[str]) -> str | None:
        if named_reference(match.string, match.start()):
            return None
        return kind if valid(_compact(match.group(0))) else None

    return classify


def _always(kind: str) -> Callable[[re.Match[str]], str | None]:
    def classify(match: re.Match[str]) -> str | None:
        return None if named_reference(match.string, match.start()) else kind

    return classify


_GAP = rf"[\s{SEAM}]*"
PASSPORT = re.compile(
    r"(?i:passport|reisepass|passnummer|passeport|pasaporte|passaporto|paszport\w*|"
    r"паспорт\w*|pasaport\w*|passi|paspoort|passaporte|パスポート|护照|護照|여권|पासपोर्ट)"
    rf"(?:{_GAP}(?i:numarası|number|numéro|número|numero|numer|nummer|num|no\.?|nr\.?|номер|"
    r"番号|号码|號碼|번호|संख्या)(?![A-Za-zÀ-ɏЀ-ӿ])){0,2}"
    rf"{_GAP}(?:(?i:is|ist|est|es|è|é|to)\s|:|：|は|是|는|-|—)?{_GAP}"
    r"(?P<value>[A-Z0-9]{1,4}(?:\s?[A-Z0-9]{2,9})?)(?![\w])"
)
"""A passport number after the word passport (and number) in sixteen languages; `passport`
decides whether the value is one."""


def passport(match: re.Match[str]) -> bool:
    """Six to twelve letters and digits, with a digit: "X12345678", "4509 123456", not "is
    expired"."""
    value = re.sub(r"\s", "", match.group("value"))
    return 6 <= len(value) <= 12 and any(c.isdigit() for c in value)


DETECTORS: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str | None]], ...] = (
    (CHINA_ID, _checked("national_id", checksums.china_id_valid)),
    (NIR, _checked("nir", checksums.nir_valid)),
    (CODICE_FISCALE, _checked("codice_fiscale", checksums.codice_fiscale_valid)),
    (DNI, _checked("dni", checksums.dni_valid)),
    (NINO, _always("nino")),
    (SSN, _always("ssn")),
    (DIGIT_RUN, lambda m: None if named_reference(m.string, m.start()) else _long_number(m)),
    (NINE_DIGITS, _nine_digits),
)

"""Pattern and classifier (kind, or None to leave the match alone), most specific first."""

KINDS = frozenset(
    {"ssn", "nino", "steuer_id", "nir", "dni", "codice_fiscale", "bsn", "sin", "aadhaar", "cpf",
     "pesel", "tc_kimlik", "snils", "passport", "national_id"}
)  # fmt: skip
"""Every kind these detectors report; allow-listing "national_id" keeps them all."""
