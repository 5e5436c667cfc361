"""The worker process a server starts (`served_worker`): it reads the server's process id and
the database URI from its standard input and drains the queue until SIGTERM, SIGINT or the
end of the server that started it."""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading

from recollect.extraction.episodes import checkpoint_reader
from recollect.extraction.worker import Outcome, Worker
from recollect.history.owned_checkpoints import ScopedPostgresSaver
from recollect.history.persistence import open_worker_pool
from recollect.store.errors import RecollectError

log = logging.getLogger("recollect.memory_worker")

PARENT_POLL_S = 1.0


def main() -> None:
    parent = int(sys.stdin.readline())  # not `getppid()` now: the server may already be gone
    target = sys.stdin.readline().strip()
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    threading.Thread(target=_stop_when_orphaned, args=(parent, stop), daemon=True).start()
    try:
        pool = open_worker_pool(target)
    except RecollectError as exc:
        log.error("%s", exc)  # the server starts the worker again after a pause
        sys.exit(1)
    try:
        worker = Worker(pool, read_session=checkpoint_reader(ScopedPostgresSaver(pool)))
        worker.serve(stop, _log_outcome)
    finally:
        pool.close()


def _stop_when_orphaned(parent: int, stop: threading.Event) -> None:
    """A server killed outright cannot stop its worker: the worker notices it has a new
    parent and stops between jobs."""
    while not stop.wait(PARENT_POLL_S):
        if os.getppid() != parent:
            stop.set()


def _log_outcome(outcome: Outcome) -> None:
    if outcome.parked or outcome.error:
        log.warning("job %s: %s: %s", outcome.job_id, outcome.status, outcome.error)
    else:
        log.info(
            "job %s: %d stored, %d for review, %d rejected",
            outcome.job_id,
            outcome.stored,
            outcome.review,
            outcome.rejected,
        )


if __name__ == "__main__":
    main()
