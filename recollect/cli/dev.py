"""`recollect dev`: `langgraph dev` with the memory worker beside it, so a conversation in
Studio or over HTTP has its facts extracted (after the debounce) with no second command.

The worker runs in a thread of this process, as `recollect worker` would in its own; `langgraph
dev` runs as a child with the options given after `--`. Stopping either way (Ctrl-C, SIGTERM,
the server exiting) stops both: the worker between jobs, its lease covering a job cut short.
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from recollect.cli.worker import report_outcome
from recollect.extraction.episodes import checkpoint_reader
from recollect.extraction.worker import Worker, start_background
from recollect.history.persistence import open_persistence


def register(commands: Any) -> None:
    """Add the `dev` sub-command."""
    parser = commands.add_parser(
        "dev", help="langgraph dev with the memory worker beside it (what `make dev` runs)"
    )
    parser.add_argument(
        "langgraph_args", nargs=argparse.REMAINDER, help="after --: passed on to langgraph dev"
    )
    parser.set_defaults(run=run)


def langgraph_command(extra: list[str]) -> list[str]:
    """`langgraph dev` from this environment, with the caller's options."""
    passed = extra[1:] if extra[:1] == ["--"] else extra
    return [str(Path(sys.executable).parent / "langgraph"), "dev", *passed]


def run(args: argparse.Namespace) -> int:
    """The server's exit status; the worker stops with it."""
    with open_persistence(worker=True) as persistence:
        worker = Worker(
            persistence.worker, read_session=checkpoint_reader(persistence.checkpointer)
        )
        runner, stop = start_background(worker, report_outcome)
        print("recollect dev: memory worker running beside langgraph dev", flush=True)
        server = subprocess.Popen(langgraph_command(args.langgraph_args))
        signal.signal(signal.SIGTERM, lambda *_: server.terminate())
        try:
            code = server.wait()
        except KeyboardInterrupt:
            server.terminate()
            code = server.wait()
        finally:
            stop.set()
            runner.join()
    return code
