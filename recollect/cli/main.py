"""Entry point: parse the command, run it, and turn known failures into one clear line."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from recollect.cli import approvals, chat, db, demo, dev, maintenance, memory, trace, worker
from recollect.store.errors import RecollectError

EXIT_FAILURE = 2
EXIT_BROKEN_PIPE = 141
"""128 + SIGPIPE, what a shell reports for `cat big | head`."""


def build_parser() -> argparse.ArgumentParser:
    """One sub-command per module; each registers its own arguments."""
    parser = argparse.ArgumentParser(
        prog="recollect", description="A LangGraph agent with durable, bounded memory."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    chat.register(commands)
    demo.register(commands)
    db.register(commands)
    memory.register(commands)
    worker.register(commands)
    dev.register(commands)
    maintenance.register(commands)
    approvals.register(commands)
    trace.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; exit non-zero with a single line when something known goes wrong."""
    try:
        args = build_parser().parse_args(argv)
        result: int = args.run(args)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's last flush
    except SystemExit:  # --help, or a usage error: argparse has printed and exits
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            return _reader_left()
        raise
    except BrokenPipeError:
        return _reader_left()
    except RecollectError as exc:
        print(f"recollect: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt:
        return 130
    return result


def _reader_left() -> int:
    """The reader closed the pipe (`... | head`): stop quietly, as `cat` does.

    Output still buffered for the pipe is dropped by pointing stdout at /dev/null, so the
    interpreter's final flush cannot raise again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return EXIT_BROKEN_PIPE


if __name__ == "__main__":
    sys.exit(main())
