"""The prepare step joins recall's and trim's updates, and refuses a field both wrote."""

from __future__ import annotations

import pytest

from recollect.prebuilt.prepare import _together


def test_recall_and_trim_updates_are_joined() -> None:
    joined = _together({"recalled": []}, {"messages": [], "unpinned": 1})
    assert joined == {"recalled": [], "messages": [], "unpinned": 1}


def test_a_field_both_wrote_is_refused() -> None:
    with pytest.raises(RuntimeError, match="recalled"):
        _together({"recalled": []}, {"recalled": [], "messages": []})
