"""A worker beside a server rests after each job while the rest of its process is busy, and
goes back to its jobs as soon as the process is idle."""

from __future__ import annotations

import threading
import time

from recollect.extraction.worker import IDLE_WINDOW_S, rest_while_busy

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
