"""`--org` for every command: one help text that names the default, one way to resolve it."""

from __future__ import annotations

import argparse
import os
from typing import Any

ORG_VARIABLE = "RECOLLECT_ORG_ID"
FALLBACK_ORG = "default"


def default_org() -> str:
    """The organisation a command uses without `--org`."""
    return os.environ.get(ORG_VARIABLE) or FALLBACK_ORG


def add_org_argument(parser: Any, what: str = "organisation id") -> None:
    """Add `--org`, its help naming the default in effect and where it comes from."""
    parser.add_argument(
        "--org",
        default=None,
        help=f"{what} (default: {default_org()!r}, from {ORG_VARIABLE}, else {FALLBACK_ORG!r})",
    )


def org_of(args: argparse.Namespace) -> str:
    """`--org` if given, else the default."""
    return str(args.org) if getattr(args, "org", None) else default_org()


def in_org(args: argparse.Namespace) -> str:
    """` in org 'acme' (the default; pass --org to look elsewhere)` for "nothing found" lines."""
    org = org_of(args)
    if getattr(args, "org", None):
        return f" in org {org!r}"
    return f" in org {org!r} (the default; pass --org to look in another)"
