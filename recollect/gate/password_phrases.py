"""Credentials said in words: "my Gmail password is hunter2", "der WLAN-Schlüssel lautet …",
"her API token is 8f14…",
"mon code PIN est 4821", "mi contraseña es …", "a senha do wifi é …", "la mia password è …",
"mijn wachtwoord is …".

A password-like word, an optional "for/of/du/del …" qualifier, a copula or colon, then the
value. A code or PIN needs digits; a password may be a plain word, but only a single one that
ends the clause and is not a word people use to describe passwords ("is weak", "ist
abgelaufen", "est trop court"), so talk about passwords stays.
"""

# ruff: noqa: RUF001  (quotation marks of several languages are what these rules read)
from __future__ import annotations

import re
from collections.abc import Iterable

_PASSWORD_WORDS = (
    r"pass\s?words?|passphrase|passwd|pwd|pw|login\s+password|wi-?fi\s+(?:password|key)|"
    r"network\s+key|"  # en
    r"passwort|kennwort|wlan-?(?:passwort|schlüssel|kennwort)|wlan\s+(?:passwort|schlüssel)|"  # de
    r"mot\s+de\s+passe|mdp|clé\s+(?:wi-?fi|wpa)|"  # fr
    r"contraseña|clave\s+(?:del\s+wi-?fi|wi-?fi|secreta|de\s+acceso)|(?:(?<=mi\s)|(?<=tu\s))clave|"
    r"senha|palavra-passe|"  # pt
    r"parola\s+d['’]ordine|"  # it
    r"wachtwoord|wifi-wachtwoord"  # nl
)
_NETWORK = r"(?:\s+(?:wi-?fi|wlan|wpa2?))?"
"""The network a password word names after it: "mot de passe wifi", "contraseña wifi"."""
_CODE_WORDS = (
    r"pin(?:\s?code|\s+number)?|passcode|security\s+code|cvv|cvc|access\s+code|alarm\s+code|"
    r"door\s+code|unlock\s+code|gate\s+code|"  # en
    r"geheimzahl|geheimnummer|zugangscode|türcode|alarmcode|"  # de
    r"code\s+(?:pin|secret|confidentiel|d['’]accès|de\s+la\s+porte|du\s+portail|de\s+l['’]alarme)|"
    r"código\s+(?:pin|secreto|de\s+acceso|de\s+acesso|de\s+la\s+puerta|do\s+portão)|"  # es / pt
    r"codice\s+(?:pin|segreto|d['’]accesso|di\s+accesso|del\s+cancello)|"  # it
    r"pincode|toegangscode|inlogcode|deurcode"  # nl
)
_QUALIFIER = (
    r"(?:\s+(?:for|of|to|on|at|für|vom|von|zum|zur|des|du|de\s+la|de|da|do|del|della|dell['’]|"
    r"di|dello|van|voor|bij|chez|para|per|pour)\s+[^\s,.;:!?]+(?:\s+[^\s,.;:!?]+)?)?"
)
_COPULA = (
    r"(?:\s*[:=]\s*|\s+(?:is|was|is\s+set\s+to|ist|lautet|war|est|était|es|era|é|è|era|sono|"
    r"blijft|wordt|remains)(?!\w)\s*:?\s*)"
)
_VALUE = (
    r"(?P<value>[\"'“”„«‘’`][^\"'“”„«»‘’`]{1,64}[\"'“”»‘’`]"  # quoted
    r"|\d(?:[\d \-.]*\d)?(?![^\s.,;:!?])"  # digits, maybe said one by one
    r"|[^\s]+)"
)
_KEY_WORDS = (
    r"(?:api|access|auth|bearer|secret|private|personal\s+access|refresh|session)[\s_-]*"
    r"(?:token|key)|tokens?|api[\s_-]*keys?|schlüssel|clé\s+(?:api|secrète)|chiave\s+api"
)
PHRASE = re.compile(
    rf"(?i)(?<![\w-])(?:(?P<password>(?:{_PASSWORD_WORDS}){_NETWORK})|(?P<code>{_CODE_WORDS})|"
    rf"(?P<key>{_KEY_WORDS}))(?![\w-])"
    rf"{_QUALIFIER}{_COPULA}{_VALUE}"
)
_NOT_A_VALUE = frozenset(
    """too very so quite really weak strong long short easy hard simple complicated complex
    secure insecure safe unsafe wrong right correct incorrect expired invalid valid new old same
    different saved stored written required needed missing lost forgotten changed reset blank
    empty not the a an in on at still also just now never always somewhere hidden encrypted
    unknown set there printed protected mandatory optional shared personal private secret his
    her my their our your its it something what how where stuck back up case-sensitive
    obvious guessable predictable ok okay fine good bad great terrible funny silly cute mine
    yours known compromised leaked hacked stolen updated random generated
    zu sehr schwach stark lang kurz einfach schwer sicher unsicher falsch richtig abgelaufen
    ungültig gültig neu alt gleich geändert vergessen gespeichert geheim nicht
    trop très faible fort long court facile difficile sûr simple faux juste expiré invalide
    nouveau ancien même changé oublié enregistré pas
    demasiado muy débil fuerte larga corta fácil difícil segura incorrecta correcta caducada
    nueva vieja misma cambiada olvidada
    muito fraca forte longa curta fácil difícil segura errada certa expirada nova velha mesma
    alterada esquecida
    troppo molto debole forte lunga corta facile difficile sicura sbagliata giusta scaduta
    nuova vecchia stessa cambiata dimenticata
    te heel zwak sterk lang kort makkelijk moeilijk veilig fout goed verlopen nieuw oud
    hetzelfde gewijzigd vergeten geheim niet""".split()  # noqa: SIM905 (one word list per language)
)
_UNITS = re.compile(
    r"(?i)\s*(?:characters?|chars?|digits?|letters?|symbols?|numbers|long|days?|weeks?|months?|"
    r"years?|times|zeichen|stellen|ziffern|stellig\w*|caractères|chiffres|lettres|caracteres|"
    r"dígitos|letras|caratteri|cifre|lettere|tekens|cijfers|letters)\b"
)
_CLAUSE_END = re.compile(r"\s*(?:$|[.,;!?)\]]|\s+(?:and|und|et|y|e|en)\s)")
_MADE_UP = re.compile(r"\d|[^\w\s]|[a-z][A-Z]|_")


def _counts(match: re.Match[str]) -> bool:
    value: str = match.group("value")
    if value[0] in "\"'“”„«‘’`":
        return True
    bare = value.rstrip(".,;:!?")
    if re.fullmatch(r"[\d \-.]+", bare):
        digits = re.sub(r"\D", "", bare)
        return len(digits) >= 3 and not _UNITS.match(match.string, match.end())
    if match.group("code"):
        return sum(c.isdigit() for c in bare) >= 3
    if match.group("key"):  # a key or token said in words: long, letters and digits mixed
        return len(bare) >= 16 and bool(re.search(r"\d", bare) and re.search(r"[a-zA-Z]", bare))
    if _MADE_UP.search(bare):
        return True
    ends_clause = bool(_CLAUSE_END.match(match.string, match.start("value") + len(bare)))
    return ends_clause and bare.casefold() not in _NOT_A_VALUE


def find(text: str) -> Iterable[tuple[int, int, str]]:
    """(start, end, "password" or "passcode") for each value a phrasing gives away."""
    for match in PHRASE.finditer(text):
        if _counts(match):
            value = match.group("value")
            end = match.start("value") + len(value.rstrip(".,;:!?")) if value[0].isalnum() else 0
            kind = (
                "passcode" if match.group("code") else "token" if match.group("key") else "password"
            )
            yield match.start("value"), end or match.end("value"), kind
