"""A worker beside a server rests after each job while the rest of its process is busy, and
goes back to its jobs as soon as the process is idle."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from recollect.extraction import worker as worker_module
from recollect.extraction.worker import (
    IDLE_WINDOW_S,
    Outcome,
    Worker,
    WorkerSettings,
    rest_while_busy,
)

REST_S = 1.5


def _rested(busy: bool) -> float:
    stop, done = threading.Event(), threading.Event()

    def spin() -> None:
        while not done.is_set():
            sum(range(2_000))

    spinner = threading.Thread(target=spin, daemon=True)
    if busy:
        spinner.start()
    started = time.monotonic()
    try:
        rest_while_busy(stop, REST_S)
    finally:
        done.set()
    return time.monotonic() - started


def test_an_idle_process_ends_the_rest_after_one_window() -> None:
    assert _rested(busy=False) < max(IDLE_WINDOW_S * 3, REST_S / 2)


def test_a_busy_process_keeps_the_worker_resting() -> None:
    assert _rested(busy=True) >= REST_S - 0.05


def test_a_stop_ends_the_rest_at_once() -> None:
    stop = threading.Event()
    stop.set()
    started = time.monotonic()
    rest_while_busy(stop, REST_S)
    assert time.monotonic() - started < 0.1


class _ClaimClock(Worker):
    """A worker whose claims find no job and are timed (no database: serve's pacing alone)."""

    def __init__(self) -> None:
        self.settings = WorkerSettings(poll_s=0.05)
        self.claims: list[float] = []

    def prune(self) -> int:
        return 0

    def end_idle_sessions(self) -> list[str]:
        return []

    def run_once(self, *args: Any, **kwargs: Any) -> Outcome | None:
        self.claims.append(time.monotonic())
        return None


def _first_claims(busy: bool, monkeypatch: pytest.MonkeyPatch) -> list[float]:
    monkeypatch.setattr(worker_module, "QUIET_WAIT_S", 1.0)
    stop, done = threading.Event(), threading.Event()

    def spin() -> None:
        while not done.is_set():
            sum(range(2_000))

    if busy:
        threading.Thread(target=spin, daemon=True).start()
    clock = _ClaimClock()
    started = time.monotonic()
    serving = threading.Thread(target=clock.serve, args=(stop, None, 0.2))
    serving.start()
    time.sleep(1.6)
    stop.set()
    done.set()
    serving.join(5)
    return [t - started for t in clock.claims]


def test_a_busy_process_keeps_the_first_claim_waiting_then_the_worker_takes_its_share(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    claims = _first_claims(busy=True, monkeypatch=monkeypatch)
    assert claims[0] >= 0.95, "a job waits for a quiet moment, up to the wait"
    assert len(claims) >= 3, "busy past the wait, the worker claims again"


def test_a_quiet_process_claims_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _first_claims(busy=False, monkeypatch=monkeypatch)[0] < 0.5
