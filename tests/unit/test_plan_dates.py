"""The day a plan starts, read from its words in each language the cues know."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from recollect.longterm.plan_dates import planned_start
from recollect.longterm.plans import plan_subject

SAID = datetime(2026, 12, 3, 10, tzinfo=UTC)
"""A Thursday."""


@pytest.mark.parametrize(
    ("text", "starts"),
    [
        ("Next month I'm moving to Oslo", "2027-01-01"),
        ("Will start at McKinsey in September", "2027-09-01"),
        ("À partir de janvier je travaille chez X", "2027-01-01"),
        ("Zieht nächsten Monat nach Wien", "2027-01-01"),
        ("Ab Januar arbeite ich bei SAP", "2027-01-01"),
        ("Se mudará a Granada el próximo mes", "2027-01-01"),
        ("Vai começar no Itaú em março", "2027-03-01"),
        ("Il prossimo anno si trasferirà a Roma", "2027-01-01"),
        ("来月から楽天で働く予定", "2027-01-01"),
        ("4月から東京に住む予定", "2027-04-01"),
        ("I'm moving tomorrow", "2026-12-04"),
        ("Next week I start at Acme", "2026-12-07"),
        ("I will start on 2027-02-15", "2027-02-15"),
        ("Starting 15 January 2027 I work at X", "2027-01-15"),
        ("Will start on March 3rd", "2027-03-03"),
        ("Will join Acme in December", "2027-12-01"),
    ],
)
def test_the_words_name_the_first_day_after_they_were_said(text: str, starts: str) -> None:
    start = planned_start(text, SAID)
    assert start is not None
    assert start.isoformat() == f"{starts}T00:00:00+00:00"


@pytest.mark.parametrize(
    "text", ["I'm going to move to Oslo", "I may move to Oslo", "I will start on 2020-01-01"]
)
def test_no_day_to_come_no_start(text: str) -> None:
    assert planned_start(text, SAID) is None


def test_the_verb_names_the_slot() -> None:
    assert plan_subject("Next month I'm moving to Oslo") == "location"
    assert plan_subject("Will join Shopify in October") == "employer"
    assert plan_subject("来月から楽天で働く予定") == "employer"
    assert plan_subject("Will bake bread next week") is None
