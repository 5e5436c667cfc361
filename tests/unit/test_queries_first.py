"""The embedder's lock lets a waiting query go before waiting passages, and passages run a few
at a time, so a turn's query never waits for a worker's whole batch."""

from __future__ import annotations

import threading
import time

from recollect.models.queries_first import QueriesFirst


def _wait_until_blocked(thread: threading.Thread) -> None:
    time.sleep(0.05)  # the thread reached the lock's wait (nothing else can release it)
    assert thread.is_alive()


def test_a_waiting_query_goes_before_a_passage_that_waited_longer() -> None:
    lock = QueriesFirst()
    order: list[str] = []

    def take(kind: str) -> None:
        with lock.query() if kind == "query" else lock.passages():
            order.append(kind)

    with lock.passages():  # a worker's batch holds the engine
        passages = threading.Thread(target=take, args=("passages",))
        passages.start()
        _wait_until_blocked(passages)
        query = threading.Thread(target=take, args=("query",))
        query.start()
        _wait_until_blocked(query)
    passages.join(5)
    query.join(5)
    assert order == ["query", "passages"]


def test_one_holder_at_a_time() -> None:
    lock = QueriesFirst()
    inside = 0
    most = 0
    guard = threading.Lock()

    def hold(kind: str) -> None:
        nonlocal inside, most
        for _ in range(50):
            with lock.query() if kind == "query" else lock.passages():
                with guard:
                    inside += 1
                    most = max(most, inside)
                with guard:
                    inside -= 1

    threads = [threading.Thread(target=hold, args=(k,)) for k in ("query", "passages") * 3]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert most == 1
