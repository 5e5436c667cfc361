"""`recollect worker`: drain the background memory queue until stopped (or once, `--once`)."""

from __future__ import annotations

import argparse
import signal
import threading
from typing import Any

from recollect.extraction.episodes import checkpoint_reader
from recollect.extraction.worker import Outcome, Worker
from recollect.history.persistence import open_persistence


def register(commands: Any) -> None:
    """Add the `worker` sub-command."""
    parser = commands.add_parser("worker", help="run the background fact-extraction worker")
    parser.add_argument("--once", action="store_true", help="run what is due now, then exit")
    parser.add_argument(
        "--model",
        action="append",
        default=None,
        metavar="NAME",
        help="run only jobs queued for this model (repeatable; default: every job); others "
        "stay queued for a worker that has their model",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """SIGTERM and Ctrl-C stop it between jobs; a kill mid-job is recovered by the lease."""
    with open_persistence(worker=True) as persistence:
        worker = Worker(
            persistence.worker,
            read_session=checkpoint_reader(persistence.checkpointer),
            models=frozenset(args.model) if args.model else None,
        )
        if args.once:
            for outcome in worker.drain():
                report_outcome(outcome)
            ended = worker.end_idle_sessions()
            if ended:
                print(f"sessions: {len(ended)} idle session(s) summarised as episodes", flush=True)
            return 0
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        print("worker: waiting for memory jobs (Ctrl-C to stop)", flush=True)
        try:
            worker.serve(stop, on_outcome=report_outcome)
        except KeyboardInterrupt:
            stop.set()
    return 0


def report_outcome(outcome: Outcome) -> None:
    """One line per finished job: stored, for review, rejected; or why it stopped."""
    if outcome.parked:
        print(f"job {outcome.job_id}: parked: {outcome.error}", flush=True)
    elif outcome.error:
        print(f"job {outcome.job_id}: {outcome.status}: {outcome.error}", flush=True)
    else:
        print(
            f"job {outcome.job_id}: {outcome.stored} stored, {outcome.review} for review, "
            f"{outcome.rejected} rejected",
            flush=True,
        )
