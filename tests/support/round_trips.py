"""Count the round trips pipelined connections make, by what the client waits for."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from psycopg._pipeline_base import BasePipeline


@contextmanager
def round_trips() -> Iterator[list[int]]:
    """A one-item list counting each time a pipeline waits for the server: a Sync (where a
    pipeline ends, or `sync()`), or a flush a read sends in the middle of a pipeline. A
    pipeline's end counts once, though it sends a flush after its Sync."""
    count = [0]
    enqueue_sync, fetch_gen, exit_gen = (
        BasePipeline._enqueue_sync,
        BasePipeline._fetch_gen,
        BasePipeline._exit_gen,
    )

    def counted_sync(self: Any) -> None:
        count[0] += 1
        enqueue_sync(self)

    def counted_fetch(self: Any, *, flush: bool) -> Any:
        if flush and self.result_queue and not getattr(self, "_exiting", False):
            count[0] += 1
        return (yield from fetch_gen(self, flush=flush))

    def exiting(self: Any) -> Any:
        self._exiting = True
        try:
            return (yield from exit_gen(self))
        finally:
            self._exiting = False

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(BasePipeline, "_enqueue_sync", counted_sync)
        patch.setattr(BasePipeline, "_fetch_gen", counted_fetch)
        patch.setattr(BasePipeline, "_exit_gen", exiting)
        yield count
