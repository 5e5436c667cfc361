"""`recollect dev`: `langgraph dev` from this environment, with the options given after `--`.

The served app runs the memory worker in its own lifespan (`recollect.engine.server_worker`),
so this is plain `langgraph dev`; it stays for the command line's habit and `make dev`.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import Any


def register(commands: Any) -> None:
    """Add the `dev` sub-command."""
    parser = commands.add_parser(
        "dev", help="langgraph dev from this environment (the server extracts facts itself)"
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
    """The server's exit status."""
    server = subprocess.Popen(langgraph_command(args.langgraph_args))
    try:
        return server.wait()
    except KeyboardInterrupt:
        server.terminate()
        return server.wait()
