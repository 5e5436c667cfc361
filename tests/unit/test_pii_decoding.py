"""PII is matched after decoding: entities, %-escapes, spelled `at`/`dot` with any separator,
numbers in words, look-alike letters in digit runs, keycaps and other digit scripts, spaced
characters; addresses with postcodes, a postcode beside a birth date; national ids labelled as
what they are."""

# ruff: noqa: RUF001  (letters of several scripts are what these cases are about)
from __future__ import annotations

import pytest

from recollect.gate.pii_decoding import decode
from recollect.gate.redaction import redact
from tests.support.screening_corpus import PII

ENCODED = [
    ("My SSN is one two three, four five, six seven eight nine", "[SSN]"),
    ("Meine SSN ist eins zwei drei, vier fünf, sechs sieben acht neun", "[SSN]"),
    ("SSN 123-45-678O", "[SSN]"),
    ("SSN one-two-three-four-five-six-seven-eight-nine", "[SSN]"),
    ("Email ana&#64;example.com", "[EMAIL]"),
    ("Email ana%40example.com", "[EMAIL]"),
    ("Email ana_at_example_dot_com", "[EMAIL]"),
    ("Email ana #at# example #dot# com", "[EMAIL]"),
    ("Card [4111] [1111] [1111] [1111]", "[CARD]"),
    ("Card four one one one, one one one one, one one one one, one one one one", "[CARD]"),
    ("Call me on 2️⃣1️⃣2️⃣5️⃣5️⃣5️⃣0️⃣1️⃣4️⃣2️⃣", "[PHONE]"),
    ("My number is two one two, five five five, zero one four two", "[PHONE]"),
    ("IBAN D E 8 9 3 7 0 4 0 0 4 4 0 5 3 2 0 1 3 0 0 0", "[IBAN]"),
    ("J'habite au 12 rue de la paix, 75002 Paris", "[ADDRESS]"),
    ("Postcode SW1A 1AA, born 12/03/1985", "[POSTCODE]"),
    ("Lives at 12 rue de la Paix, born 3 March 1990", "[BIRTH_DATE]"),
    ("Geboren am 12.03.1985, wohnt Hauptstraße 12", "[BIRTH_DATE]"),
    ("Nacida el 5 de mayo de 1988, vive en Calle Mayor 5", "[BIRTH_DATE]"),
    ("Nato il 12/03/1985, abita in Via Roma 10", "[BIRTH_DATE]"),
    ("ana chiocciola example punto com", "[EMAIL]"),
    ("ana собака example точка ru", "[EMAIL]"),
    ("ana snabel-a example punkt se", "[EMAIL]"),
    ("ana małpa example kropka pl", "[EMAIL]"),
    ("pavel zavináč example tečka cz", "[EMAIL]"),
    ("a n a @ e x a m p l e . c o m", "[EMAIL]"),
    ("ana@example·com", "[EMAIL]"),
    ("Мой СНИЛС 112-233-445 95", "[SNILS]"),
    ("TC kimlik no 10000000146", "[TC_KIMLIK]"),
    ("Passport number: 4509 123456", "[PASSPORT]"),
    ("Mi pasaporte es AAB123456", "[PASSPORT]"),
    ("パスポート番号はTK1234567です", "[PASSPORT]"),
    ("Pasaport numarası U12345678", "[PASSPORT]"),
    ("大阪府大阪市北区梅田3丁目1番1号", "[ADDRESS]"),
    ("서울특별시 강남구 테헤란로 152에 살아요", "[ADDRESS]"),
    ("Mieszka przy ulicy Marszałkowskiej 10, 00-590 Warszawa", "[ADDRESS]"),
    ("携帯は〇九〇・一二三四・五六七八です", "[PHONE]"),
    ("我的电话是一三八一二三四五六七八", "[PHONE]"),
    ("Mon numéro : zéro six, douze, trente-quatre, cinquante-six, soixante-dix-huit", "[PHONE]"),
    ("Geburtsdatum 03.07.1979, PLZ 80331", "[POSTCODE]"),
    ("生年月日は1985年3月14日、郵便番号は100-0001", "[BIRTH_DATE]"),
    ("Data urodzenia 12.05.1990, kod pocztowy 00-950", "[BIRTH_DATE]"),
    ("생년월일은 1990년 5월 3일, 우편번호는 06236", "[POSTCODE]"),
]


@pytest.mark.parametrize(("text", "placeholder"), ENCODED)
def test_encoded_values_are_redacted(text: str, placeholder: str) -> None:
    assert placeholder in redact(text).text


@pytest.mark.parametrize(
    ("text", "label"),
    [(case.text, case.label) for case in PII if case.label is not None],
)
def test_national_ids_are_labelled_as_what_they_are(text: str, label: str) -> None:
    assert f"[{label.upper()}]" in redact(text).text


@pytest.mark.parametrize(
    "text",
    [
        "I have two cats and three dogs",
        "Born in 1985 and lives near SW1A",
        "Born on 3 March 1990",
        "Postcode SW1A 1AA",
        "Ran 5 miles down main street",
        "Works at booking.com",
        "Scored one, two, three goals",
        "Her passport is expired",
        "Renewed his passport in 2021",
        "Passport expires 2031",
        "Ticket 10000000147 was closed",
        "Zip code 94103 is where she works",
        "三人で一二三四五六を数えた",
        "Scored twelve, thirty-four and fifty-six points",
        "区役所まで3分",
        "강남구에서 일한다",
        "Walks the dog at the park dot every morning",
    ],
)
def test_plain_facts_stay(text: str) -> None:
    assert redact(text).text == text


def test_decoding_leaves_plain_text_alone() -> None:
    assert decode("Prefers TypeScript and Postgres 18") == "Prefers TypeScript and Postgres 18"
