"""The bounded executor: the caller's context variables travel, the size is validated."""

from __future__ import annotations

import asyncio
import contextvars
import threading

import pytest

from recollect.store.offload import OFFLOAD_THREADS_ENV, offload_threads, offloaded

_who: contextvars.ContextVar[str] = contextvars.ContextVar("who", default="nobody")


def test_work_runs_off_the_loop_with_the_callers_context() -> None:
    async def scenario() -> tuple[str, bool]:
        _who.set("ana")
        loop_thread = threading.get_ident()
        return await offloaded(lambda: (_who.get(), threading.get_ident() != loop_thread))

    assert asyncio.run(scenario()) == ("ana", True)


@pytest.mark.parametrize("raw", ["0", "-2", "many", "1.5"])
def test_a_bad_thread_count_is_one_clear_line(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv(OFFLOAD_THREADS_ENV, raw)
    with pytest.raises(ValueError, match=OFFLOAD_THREADS_ENV):
        offload_threads()


def test_the_default_is_the_cpu_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(OFFLOAD_THREADS_ENV, raising=False)
    assert offload_threads() >= 1
    monkeypatch.setenv(OFFLOAD_THREADS_ENV, "3")
    assert offload_threads() == 3
