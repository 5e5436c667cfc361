"""A value glued to the words of a script written without spaces ("携帯は090-1234-5678です")
is found like any other, and the text around it comes back exactly as written."""

# ruff: noqa: RUF001  (letters of several scripts are what these cases are about)
from __future__ import annotations

import pytest

from recollect.gate.redaction import redact
from recollect.gate.script_seams import SEAM, close_seams, open_seams

GLUED = [
    ("携帯は090-1234-5678です", "携帯は[PHONE]です"),
    ("我的手机是13812345678", "我的手机是[PHONE]"),
    ("전화번호는010-1234-5678입니다", "전화번호는[PHONE]입니다"),
    ("カード番号は4111 1111 1111 1111です", "カード番号は[CARD]です"),
    ("信用卡4111111111111111", "信用卡[CARD]"),
    ("メールはana@example.comです", "メールは[EMAIL]です"),
    ("내 이메일은ana@example.com이야", "내 이메일은[EMAIL]이야"),
    ("社会保障番号123-45-6789", "社会保障番号[SSN]"),
    ("マイナンバーは123456789018です", "マイナンバーは[MY_NUMBER]です"),
    ("주민등록번호는900101-1234568입니다", "주민등록번호는[RRN]입니다"),
    ("รหัสบัตร4111111111111111ครับ", "รหัสบัตร[CARD]ครับ"),
    ("كارتي4111111111111111", "كارتي[CARD]"),
]


@pytest.mark.parametrize(("text", "redacted"), GLUED)
def test_a_glued_value_is_redacted(text: str, redacted: str) -> None:
    assert redact(text).text == redacted


@pytest.mark.parametrize(
    "text",
    [
        "注文番号はA-12345です",
        "2025年3月14日に東京へ",
        "iPhone15を買った",
        "GPT4が好き",
        "3回目の東京",
    ],
)
def test_glued_numbers_that_are_not_personal_stay(text: str) -> None:
    assert redact(text).text == text


def test_seams_come_out_as_they_went_in() -> None:
    text = "携帯は090-1234-5678です、GPT4が好き"
    assert SEAM in open_seams(text)
    assert close_seams(open_seams(text)) == text


def test_a_text_holding_the_mark_already_is_read_as_it_is() -> None:
    text = f"携帯は{SEAM}090-1234-5678です"
    assert open_seams(text) == text
