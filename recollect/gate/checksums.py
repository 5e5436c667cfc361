"""Check digits of the identifiers redaction looks for.

A number is only called a card, an IBAN or a national id when its checksum holds, so order
numbers, versions and amounts of the same shape survive. Each function takes the compact form
(digits, or letters and digits, no separators).
"""

from __future__ import annotations

IBAN_LENGTHS: dict[str, int] = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22,
    "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28,
    "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23,
    "GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26,
    "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20,
    "LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MR": 27, "MT": 31, "MU": 30, "NL": 18,
    "NO": 15, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "SA": 24,
    "SC": 31, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "ST": 25, "SV": 28, "TL": 23, "TN": 24,
    "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
}  # fmt: skip
"""ISO 13616 registry lengths; a country not listed may still have 15 to 34 characters."""


def luhn_valid(digits: str) -> bool:
    """Cards (and Canadian SINs): doubling every second digit from the right sums to 0 mod 10."""
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2 == 1:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def iban_valid(candidate: str) -> bool:
    """ISO 13616: the country's length, then the first four characters moved to the end,
    letters to numbers, mod 97 == 1."""
    compact = "".join(candidate.split()).upper()
    expected = IBAN_LENGTHS.get(compact[:2])
    if expected is not None and len(compact) != expected:
        return False
    if not 15 <= len(compact) <= 34 or not compact.isalnum():
        return False
    rearranged = compact[4:] + compact[:4]
    numeric = "".join(str(int(char, 36)) for char in rearranged)
    return int(numeric) % 97 == 1


_VERHOEFF_D = (
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9), (1, 2, 3, 4, 0, 6, 7, 8, 9, 5), (2, 3, 4, 0, 1, 7, 8, 9, 5, 6),
    (3, 4, 0, 1, 2, 8, 9, 5, 6, 7), (4, 0, 1, 2, 3, 9, 5, 6, 7, 8), (5, 9, 8, 7, 6, 0, 4, 3, 2, 1),
    (6, 5, 9, 8, 7, 1, 0, 4, 3, 2), (7, 6, 5, 9, 8, 2, 1, 0, 4, 3), (8, 7, 6, 5, 9, 3, 2, 1, 0, 4),
    (9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
)  # fmt: skip
_VERHOEFF_P = (
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9), (1, 5, 7, 6, 2, 8, 3, 0, 9, 4), (5, 8, 0, 3, 7, 9, 6, 1, 4, 2),
    (8, 9, 1, 6, 0, 4, 3, 5, 2, 7), (9, 4, 5, 3, 1, 2, 6, 8, 7, 0), (4, 2, 8, 6, 5, 7, 3, 9, 0, 1),
    (2, 7, 9, 3, 8, 0, 6, 4, 1, 5), (7, 0, 4, 6, 9, 1, 3, 2, 5, 8),
)  # fmt: skip


def verhoeff_valid(digits: str) -> bool:
    """Aadhaar (India): the Verhoeff dihedral-group check digit."""
    check = 0
    for position, char in enumerate(reversed(digits)):
        check = _VERHOEFF_D[check][_VERHOEFF_P[position % 8][int(char)]]
    return check == 0


def steuer_id_valid(digits: str) -> bool:
    """German Steuer-IdNr: 11 digits, no leading zero, ISO 7064 MOD 11,10 check digit."""
    if len(digits) != 11 or digits[0] == "0":
        return False
    product = 10
    for char in digits[:10]:
        total = (int(char) + product) % 10 or 10
        product = (total * 2) % 11
    return (11 - product) % 10 == int(digits[10])


def nir_valid(compact: str) -> bool:
    """French NIR (numéro de sécurité sociale): 13 characters then a key of 97 - n mod 97;
    Corsican departments 2A/2B count as 19/18."""
    body, key = compact[:13].upper(), compact[13:]
    body = body.replace("2A", "19", 1) if body[5:7] == "2A" else body
    body = body.replace("2B", "18", 1) if body[5:7] == "2B" else body
    if not (body.isdigit() and key.isdigit() and len(key) == 2):
        return False
    return 97 - int(body) % 97 == int(key)


def dni_valid(compact: str) -> bool:
    """Spanish DNI (8 digits) and NIE (X/Y/Z + 7 digits): the letter is the number mod 23."""
    compact = compact.upper()
    head = compact[:-1].replace("X", "0", 1).replace("Y", "1", 1).replace("Z", "2", 1)
    if not head.isdigit() or len(head) != 8:
        return False
    return "TRWAGMYFPDXBNJZSQVHLCKE"[int(head) % 23] == compact[-1]


_CF_ODD = dict(
    zip(
        "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ",
        (1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11,
         3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23),
        strict=True,
    )
)  # fmt: skip


def codice_fiscale_valid(code: str) -> bool:
    """Italian codice fiscale: 16 characters, the last a weighted sum of the others mod 26."""
    code = code.upper()
    if len(code) != 16 or not code.isalnum():
        return False
    total = 0
    for position, char in enumerate(code[:15]):
        if position % 2 == 0:
            total += _CF_ODD[char]
        else:
            total += int(char) if char.isdigit() else ord(char) - ord("A")
    return chr(ord("A") + total % 26) == code[15]


def bsn_valid(digits: str) -> bool:
    """Dutch BSN: the eleven-test, weights 9..2 and -1."""
    if len(digits) != 9 or digits == "0" * 9:
        return False
    total = sum(int(d) * w for d, w in zip(digits[:8], range(9, 1, -1), strict=True))
    return (total - int(digits[8])) % 11 == 0


def cpf_valid(digits: str) -> bool:
    """Brazilian CPF: two mod-11 check digits; eleven equal digits are not a CPF."""
    if len(digits) != 11 or len(set(digits)) == 1:
        return False
    for size in (9, 10):
        total = sum(int(d) * w for d, w in zip(digits[:size], range(size + 1, 1, -1), strict=True))
        if (total * 10 % 11) % 10 != int(digits[size]):
            return False
    return True


def pesel_valid(digits: str) -> bool:
    """Polish PESEL: weights 1,3,7,9 repeating, check digit makes the sum 0 mod 10."""
    if len(digits) != 11:
        return False
    weights = (1, 3, 7, 9, 1, 3, 7, 9, 1, 3)
    total = sum(int(d) * w for d, w in zip(digits[:10], weights, strict=True))
    return (10 - total % 10) % 10 == int(digits[10])


def china_id_valid(code: str) -> bool:
    """Chinese resident id: 17 digits and an ISO 7064 MOD 11-2 check character (0-9 or X)."""
    code = code.upper()
    if len(code) != 18 or not code[:17].isdigit():
        return False
    weights = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
    total = sum(int(d) * w for d, w in zip(code[:17], weights, strict=True))
    return "10X98765432"[total % 11] == code[17]


def tc_kimlik_valid(digits: str) -> bool:
    """Turkish identity number: eleven digits, the first not 0, two check digits."""
    if len(digits) != 11 or not digits.isdigit() or digits[0] == "0":
        return False
    d = [int(c) for c in digits]
    tenth = (sum(d[0:9:2]) * 7 - sum(d[1:8:2])) % 10
    return d[9] == tenth and d[10] == sum(d[:10]) % 10


def snils_valid(digits: str) -> bool:
    """Russian SNILS: nine digits weighted 9 down to 1, their sum mod 101 (100 reads as 0) in
    the last two."""
    if len(digits) != 11 or not digits.isdigit():
        return False
    total = sum(int(c) * w for c, w in zip(digits[:9], range(9, 0, -1), strict=True))
    return int(digits[9:]) == total % 101 % 100
