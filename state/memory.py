"""The `memory` graph's state: which conversation to extract, and what each job did."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from typing_extensions import TypedDict

from recollect import Context


class MemoryRunInput(TypedDict):
    """What the `memory` graph is asked: extract the queued turns of this conversation."""

    thread_id: str


class MemoryRunState(MemoryRunInput, total=False):
    """The `memory` graph's state: its input, and what each job it ran did."""

    outcomes: list[dict[str, Any]]


@dataclass(kw_only=True)
class MemoryContext(Context):
    """The memory graph has no run settings: it drains the caller's own queued jobs, each with
    the settings its turn was queued with."""

    offered_settings: ClassVar[frozenset[str] | None] = frozenset()
