"""`recollect memory ...`: what is remembered about a user, and forgetting it."""

from __future__ import annotations

import argparse
import json
from typing import Any

from recollect.memory.erasure import forget_user
from recollect.memory.persistence import open_persistence
from recollect.state.context import Context
from recollect.state.scope import Scope


def register(commands: Any) -> None:
    """Add `memory` and its actions."""
    parser = commands.add_parser("memory", help="inspect, export or forget a user's memory")
    actions = parser.add_subparsers(dest="memory_command", required=True)
    forget = actions.add_parser("forget", help="delete a user's data from every store")
    _add_user_arguments(forget)
    forget.add_argument("--json", action="store_true", help="print counts as JSON")
    forget.set_defaults(run=run_forget)


def _add_user_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--user", required=True, help="user id")
    parser.add_argument("--org", default=None, help="organisation id (default: RECOLLECT_ORG_ID)")


def user_scope(args: argparse.Namespace) -> Scope:
    """The scope named on the command line, with the environment's default org."""
    return Scope.for_user(args.org or Context().org_id, args.user)


def run_forget(args: argparse.Namespace) -> int:
    """Erase, then print rows deleted per store."""
    scope = user_scope(args)
    with open_persistence(announce=False) as persistence:
        deleted = forget_user(persistence.pool, scope)
    if args.json:
        print(json.dumps({"org_id": scope.org_id, "user_id": scope.user_id, "deleted": deleted}))
    else:
        print(f"forgot {scope.user_id} in {scope.org_id}:")
        for store, count in deleted.items():
            print(f"  {store}: {count} row(s) deleted")
    return 0
