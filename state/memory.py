"""The `memory` graph's state: which conversation to extract, and what each job did."""

from __future__ import annotations

from typing import Any, TypedDict


class MemoryRunInput(TypedDict):
    """What the `memory` graph is asked: extract the queued turns of this conversation."""

    thread_id: str


class MemoryRunState(MemoryRunInput, total=False):
    """The `memory` graph's state: its input, and what each job it ran did."""

    outcomes: list[dict[str, Any]]
