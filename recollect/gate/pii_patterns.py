"""Contact and payment values: emails (also spelled out), cards, IBANs, API keys, street
addresses.

Digit runs may use any separator (spaces, dots, slashes, underscores, dashes). Cards and IBANs
are taken only when their checksum holds and no word before calls them an order or other
reference, so look-alikes survive.
"""

# ruff: noqa: RUF001  (look-alike characters are what these rules are about)
from __future__ import annotations

import re

from recollect.gate.checksums import IBAN_LENGTHS, iban_valid, luhn_valid
from recollect.gate.pii_context import named_reference

_UNSPACED_SCRIPT = r"\u0e00-\u0e7f\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff"
"""Thai, kana, CJK ideographs, Hangul: a local part is written in them or in the others, not
both, so a sentence glued to an address ("メールはana@…") is not taken as part of it."""
EMAIL = re.compile(
    rf"(?<![\w.+-])(?:(?:(?![{_UNSPACED_SCRIPT}])[\w.+'-])+|[{_UNSPACED_SCRIPT}]+)"
    r"@[\w-]+(?:\.[\w-]+)*\.[^\W\d_]{2,}(?![\w-])"
)
_AT_BRACKETED = r"\s*[\(\[\{<]\s*(?:at|@|arroba|arobase|chez)\s*[\)\]\}>]\s*"
_AT_WORD = r"\s+(?:at|arroba|arobase|chez)\s+|\s+@\s+|@"
_DOT_WORD = r"(?:dot|punkt|point|punto|ponto)"
_DOT_SPELLED = rf"\s*[\(\[\{{<]\s*(?:{_DOT_WORD}|\.)\s*[\)\]\}}>]\s*|\s+{_DOT_WORD}\s+"
_DOT_ANY = rf"(?:{_DOT_SPELLED}|\s*\.\s*)"
_TLD = r"[^\W\d_]{2,6}(?![\w-])"
SPELLED_EMAIL = re.compile(
    rf"(?<![\w.+-])[\w.+-]+(?:{_AT_BRACKETED}[\w-]+(?:{_DOT_ANY}[\w-]+)*?{_DOT_ANY}{_TLD}"
    rf"|(?:{_AT_WORD})[\w-]+(?:(?:{_DOT_SPELLED}|\.)[\w-]+)*?(?:{_DOT_SPELLED}|\s+\.\s+){_TLD})",
    re.IGNORECASE,
)
""""dana at example dot com", "dana(at)example(dot)com", "dana [at] mail [dot] co [dot] uk",
"dana @ example . com"; a plain " at " needs a spelled "dot", so "works at booking.com" stays."""

EMAIL_AT_DOMAIN = re.compile(
    r"(?<![\w.+-])(?P<local>[\w.+-]+)\s+(?:at|@)\s+[\w-]+(?:\.[\w-]+)*\.[^\W\d_]{2,6}(?![\w-])",
    re.IGNORECASE,
)
_EMAIL_NAMED = re.compile(r"(?i)(?:e-?mail|mail|correo|courriel|contact|write\s+to|inbox)\W*$")


def email_at_domain(match: re.Match[str]) -> str | None:
    """ "dana at example.com" is an email when the local part looks like one (a dot, digit,
    underscore or plus) or the words before say email; "works at booking.com" stays."""
    local = match.group("local")
    before = match.string[max(0, match.start() - 25) : match.start()]
    return "email" if re.search(r"[._+\d]", local) or _EMAIL_NAMED.search(before) else None


CARD = re.compile(r"(?<![\d\w])\d(?:[\s\-./_–—]{0,3}\d){12,18}(?![\d\w])")
IBAN_START = re.compile(r"(?<![A-Za-z0-9])([A-Za-z]{2})(\d{2})(?=[\s\-./_]?[A-Za-z0-9])")
_IBAN_CHAR = re.compile(r"[\s\-./_]?([A-Za-z0-9])")
API_KEY = re.compile(
    r"\b(?:sk|pk|rk)-[A-Za-z0-9_-]{20,}\b|\bAKIA[0-9A-Z]{16}\b|\bgh[pousr]_[A-Za-z0-9]{30,}\b|"
    r"\bxox[abpr]-[A-Za-z0-9-]{10,}\b|\bAIza[0-9A-Za-z_-]{35}\b"
)

_STREET_EN = (
    r"Street|St\.?|Avenue|Ave\.?|Road|Rd\.?|Boulevard|Blvd\.?|Lane|Ln\.?|Drive|Dr\.?|Court|"
    r"Ct\.?|Way|Place|Pl\.?|Terrace|Close|Crescent|Parkway|Pkwy\.?|Highway|Hwy\.?|Square|Sq\.?|"
    r"Circle|Row|Mews|Gardens|Grove|Hill|Loop|Trail|Plaza|Path|Walk|Alley|Pike|Turnpike|"
    r"Expressway|Freeway|Crossing|Heights"
)
_NOT_DISTANCE = (
    r"(?!(?i:blocks?|miles?|minutes?|mins?|km|kilomet\w+|met(?:er|re)s?|steps?|doors?|houses?|"
    r"hours?|yards?|feet|ft|streets|avenues|roads)\b)"
)
_NAME = r"(?:[A-Z0-9ÀÂÄÉÈÊËÎÏÔÖÙÛÜÇÁÍÓÚÑŁŚŻŹ][\w'’.-]*)"
_ANY_NAME = r"(?:[\w'’-]+)"
_POSTCODE_CITY = (
    r"(?:,?\s*(?:[A-Z][\w'’-]+,?\s+)?(?:\d{2}-\d{3}|\d{4}-\d{3}|\d{4,5}|"
    r"[A-Z]{1,2}\d[A-Z\d]?\s?\d[A-Z]{2})(?![\w])"
    rf"(?:\s+{_NAME}(?:[\s-]{_NAME})?)?)?"
)
"""A postcode (and the city around it) after a street is part of the address."""
ADDRESS = re.compile(
    "(?:"
    + "|".join(
        (
            # 221B Baker Street, Apt 4 / 1600 Pennsylvania Avenue NW
            rf"(?<![\w])\d{{1,5}}[A-Za-z]?,?\s+{_NOT_DISTANCE}(?:{_NAME}\s+){{1,4}}(?:{_STREET_EN})(?![\w])"
            r"(?:\s+(?:NW|NE|SW|SE|N|S|E|W)\b)?(?:,?\s*(?:Apt\.?|Apartment|Suite|Unit|Flat|#)\s*\w+)?",
            # Hauptstraße 12a, Kerkstraat 5, Musterstr. 3
            rf"(?<![\w]){_NAME}?[\wäöüß-]*(?i:straße|strasse|str\.|weg|gasse|allee|platz|ring|"
            r"damm|ufer|straat|laan|gracht|plein|dijk|kade|steeg|vej|gatan|gata|veien)\s+\d{1,4}"
            r"\s?[a-zA-Z]?(?![\w])",
            # 12 rue de la Paix, 5 bis avenue Victor Hugo
            r"(?<![\w])\d{1,4}(?:\s?(?:bis|ter))?,?\s+(?:rue|avenue|av\.|boulevard|bd|place|chemin|"
            r"allée|impasse|quai|route|cours)\s+(?:(?:de\s+la|de\s+l'|du|des|de|d')\s*)?"
            rf"{_ANY_NAME}(?:[\s-]+{_NAME}){{0,3}}",
            # Calle Mayor 5, Via Roma 10, Rua Augusta, 274, Avenida Paulista 1000
            r"(?<![\w])(?:Calle|C/|Avenida|Avda\.?|Plaza|Paseo|Carrer|Via|Viale|Piazza|Corso|Largo|"
            r"Rua|Travessa|Praça|Alameda|Rambla)\s+(?:(?:de\s+la|del|de|dos|das|da|do|di|della|"
            rf"dei)\s+)?{_NAME}(?:\s+{_NAME}){{0,3}},?\s*(?:n[º°o.]\s*)?\d{{1,5}}(?![\w])",
            # ul. Marszałkowska 10/12, ул. Тверская, д. 7
            r"(?<![\w])(?i:ul\.|ulic[ayę]|al\.|alej[ai]|ул\.|улиц[аеу]|пр\.|проспект\w*|пер\.)\s*"
            r"[\w-]+(?:\s+[^\W\d_][\w-]*)?,?"
            r"\s*(?:д\.|дом)?\s*\d{1,4}(?:/\d{1,4})?(?![\w])",
            # 朝阳区建国路88号, 千代田区丸の内1-1 (read with `script_seams` marks around digits)
            r"[\u4e00-\u9fff]{2,}(?:路|街|道|巷|弄)\ue000?\d{1,5}\ue000?号",
            r"[\u4e00-\u9fff\u3040-\u30ff]{2,}(?:区|市|町|村)[\u4e00-\u9fff\u3040-\u30ff]{1,8}"
            r"\ue000?\d{1,4}(?:\ue000?(?:[-－‐−]|丁目|番地?)\ue000?\d{1,4}){1,3}\ue000?(?:号)?",
            # 서울특별시 강남구 테헤란로 152, 분당구 정자일로 95번길 3
            r"(?:[가-힣]+(?:시|도)\s)?[가-힣]+(?:구|군|시)\s[가-힣0-9]+(?:로|길)\s?\d{1,5}"
            r"(?:-\d{1,4})?(?:번길\s?\d{1,4})?",
            # P.O. Box 1234
            r"\bP\.?\s?O\.?\s+Box\s+\d+",
        )
    )
    + ")"
    + _POSTCODE_CITY
)

ADDRESS_NAMED = re.compile(
    r"(?i)\b(?:live|lives|living|lived|address|moved\s+to|ship\s+to|deliver\s+to|send\s+to|"
    rf"resides?|home\s+is|located)\b[^\n\d]{{0,12}}?(?P<address>\d{{1,5}}[a-z]?\s+{_NOT_DISTANCE}"
    r"(?:[a-z][\w'.-]*\s+)"
    rf"{{1,4}}(?:{_STREET_EN})(?![\w]))"
)
"""Written in lower case, a street address is taken only when the words before say it is one
("lives at 55 main street"), so "ran 5 miles down main street" stays."""


def find_named_addresses(text: str) -> list[tuple[int, int]]:
    return [(m.start("address"), m.end("address")) for m in ADDRESS_NAMED.finditer(text)]


def card(match: re.Match[str]) -> str | None:
    digits = re.sub(r"\D", "", match.group(0))
    if not (13 <= len(digits) <= 19 and luhn_valid(digits)):
        return None
    return None if named_reference(match.string, match.start()) else "card"


def find_ibans(text: str) -> list[tuple[int, int]]:
    """IBANs with any separators and either case: the country's registered length (or the
    longest run from 15 to 34 characters) that passes mod 97."""
    spans: list[tuple[int, int]] = []
    for start in IBAN_START.finditer(text):
        chars = [start.group(1) + start.group(2)]
        ends = [start.end()]
        position = start.end()
        while len(chars) < 31 and (step := _IBAN_CHAR.match(text, position)):
            chars.append(step.group(1))
            ends.append(step.end())
            position = step.end()
        country = start.group(1).upper()
        lengths = [IBAN_LENGTHS[country]] if country in IBAN_LENGTHS else range(34, 14, -1)
        for length in lengths:
            count = length - 3  # the first entry holds four characters
            if 0 < count <= len(chars) and iban_valid("".join(chars[:count])):
                spans.append((start.start(), ends[count - 1]))
                break
    return spans
