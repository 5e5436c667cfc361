"""Entry point: parse the command, run it, and turn known failures into one clear line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from recollect.cli import approvals, chat, db, demo, maintenance, memory, worker
from recollect.store.errors import RecollectError

EXIT_FAILURE = 2


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
    maintenance.register(commands)
    approvals.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; exit non-zero with a single line when something known goes wrong."""
    args = build_parser().parse_args(argv)
    try:
        result: int = args.run(args)
    except RecollectError as exc:
        print(f"recollect: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt:
        return 130
    return result


if __name__ == "__main__":
    sys.exit(main())
