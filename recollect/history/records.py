"""The history engine's own records."""

from __future__ import annotations

from typing_extensions import TypedDict


class PinnedValue(TypedDict):
    """An exact value lifted from the conversation; never paraphrased by a summary."""

    kind: str
    value: str
    source_message_id: str | None
