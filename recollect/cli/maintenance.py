"""`recollect maintenance`: retention, purge and duplicate merging; safe on a schedule (one
run at a time, one transaction, `--dry-run` shows exactly what a run would do)."""

from __future__ import annotations

import argparse
import json
from typing import Any

import psycopg

from recollect.history.persistence import open_persistence
from recollect.privacy.lifecycle import MaintenanceReport, RetentionPolicy, run_maintenance
from recollect.store.errors import RecollectError
from recollect.store.server import CONNECTION_KWARGS


def register(commands: Any) -> None:
    """Add `maintenance [--dry-run] [--json]`."""
    parser = commands.add_parser(
        "maintenance", help="expire stale facts, purge past the recovery window, merge duplicates"
    )
    parser.add_argument("--dry-run", action="store_true", help="report, change nothing")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        policy = RetentionPolicy.from_env()
    except ValueError as exc:  # a bad setting stops the run before anything is touched
        raise RecollectError(str(exc)) from exc
    with (
        open_persistence(announce=False) as persistence,
        psycopg.connect(persistence.uri, **CONNECTION_KWARGS) as conn,
    ):
        report = run_maintenance(conn, policy, dry_run=args.dry_run)
    if args.json:
        print(json.dumps(report.as_json()))
    else:
        print(render(report))
    return 0


def render(report: MaintenanceReport) -> str:
    """One line per category that anything happened to."""
    head = "maintenance (dry run: nothing changed)" if report.dry_run else "maintenance"
    lines = [f"{head} at {report.now:%Y-%m-%d %H:%M} UTC"]
    for name, counts in sorted(report.categories.items()):
        lines.append(
            f"  {name:<16} expired {counts.expired}, expired unreinforced "
            f"{counts.expired_unreinforced}, merged {counts.merged}, purged {counts.purged}"
        )
    if not report.total():
        lines.append("  nothing changed")
    if report.session_episodes_purged:
        lines.append(f"  incognito episodes purged: {report.session_episodes_purged}")
    if report.traces_purged:
        lines.append(f"  memory traces purged: {report.traces_purged}")
    return "\n".join(lines)
