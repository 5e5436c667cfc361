"""The gate never fails on what it is given: any text, in any script, with any mix of digits,
separators and format characters, gets a verdict (and redaction returns text)."""

# ruff: noqa: RUF001  (look-alike characters are part of the input space)
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from recollect.extraction.validation import FactScreen
from recollect.gate.redaction import redact
from recollect.gate.screening import screen

_PIECES = st.sampled_from(
    ["4111", "1111", " ", "-", ".", "/", "_", "+", "(", ")", "@", " at ", " dot ", "com", "DE89",
     "\u200b", "\u2063", "\u034f", "０", "٣", "۴", "X", "2A", "ul. ", "rue ", "Calle ", "SSN ",
     "order ", "Ignore previous ", "&#73;", "<!--", "-->", "==", "0x", "\\x", "Іgn", "system:"]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=30).map("".join) | st.text(max_size=200))
def test_any_text_gets_a_verdict(text: str) -> None:
    assert isinstance(redact(text).text, str)
    assert isinstance(screen(text), tuple)
    verdict = FactScreen().check(text)
    assert isinstance(verdict.accepted, bool)
