"""The injectable clock offset."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from recollect.store import clock


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("3d", timedelta(days=3)),
        ("72h", timedelta(days=3)),
        ("-90m", timedelta(minutes=-90)),
        ("3600", timedelta(hours=1)),
        (" 1.5h ", timedelta(minutes=90)),
    ],
)
def test_offsets_parse(text: str, expected: timedelta) -> None:
    assert clock.parse_offset(text) == expected


def test_a_bad_offset_names_the_variable() -> None:
    with pytest.raises(ValueError, match="RECOLLECT_CLOCK_OFFSET must be a number"):
        clock.parse_offset("three days")


def test_now_moves_with_the_offset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(clock.CLOCK_OFFSET_ENV, "3d")
    shifted = clock.now()
    assert shifted.tzinfo is not None
    assert shifted - datetime.now(UTC) > timedelta(days=3) - timedelta(seconds=5)
