"""`recollect memory ...`: operator commands on long-term memory.

`screen` runs the write path's validation on candidate facts from stdin; `review` works the
queue of low-confidence facts; `forget` erases a user from every store; `export` and `show`
tell them what is held; `restore` undoes an expiry within the recovery window.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from pathlib import Path
from typing import Any

import psycopg

from recollect.cli.org import add_org_argument, in_org, org_of
from recollect.extraction import queue as jobs
from recollect.extraction.fact_writer import default_writer
from recollect.extraction.review import accept, list_candidates, reject
from recollect.extraction.validation import FactScreen, ValidationPolicy
from recollect.history.persistence import open_persistence
from recollect.privacy.export import describe_user, export_user
from recollect.privacy.forget import forget_user
from recollect.privacy.lifecycle import restore_fact
from recollect.store.errors import RecollectError
from recollect.store.scope import Scope
from recollect.store.server import CONNECTION_KWARGS

ALL_JOBS = "all"


def register(commands: Any) -> None:
    """Add `memory screen|review|jobs|forget`."""
    parser = commands.add_parser("memory", help="long-term memory: screen, review, forget")
    actions = parser.add_subparsers(dest="memory_command", required=True)
    screen = actions.add_parser(
        "screen",
        help="validate candidate facts (one per line on stdin) exactly as the write path does",
    )
    screen.add_argument(
        "--category", default=None, help="check every line against the category allow-list too"
    )
    screen.add_argument(
        "--batch",
        action="store_true",
        help="treat stdin as one extraction batch (duplicates, per-category caps and "
        "instructions split across neighbouring lines are judged across lines); by default "
        "each line is judged on its own",
    )
    screen.set_defaults(run=run_screen)
    review = actions.add_parser(
        "review", help="facts below the confidence bar, awaiting a decision"
    )
    steps = review.add_subparsers(dest="review_command", required=True)
    listing = steps.add_parser("list", help="list facts awaiting review")
    listing.add_argument("--all", action="store_true", help="include decided and rejected facts")
    listing.add_argument("--json", action="store_true", help="one JSON object per line")
    listing.set_defaults(run=run_review_list)
    for name, run, summary in (
        ("accept", run_review_accept, "store a fact in long-term memory"),
        ("reject", run_review_reject, "dismiss a fact"),
    ):
        step = steps.add_parser(name, help=summary)
        step.add_argument("id", type=int, help="the id shown by `review list`")
        step.set_defaults(run=run)
    queue = actions.add_parser("jobs", help="the background extraction queue and dead letters")
    queue.add_argument(
        "--retry",
        nargs="?",
        const=ALL_JOBS,
        metavar="ID",
        help="requeue a dead-lettered or parked job (without ID: every one, e.g. after setting "
        "the missing key or model)",
    )
    queue.set_defaults(run=run_jobs)
    forget = actions.add_parser("forget", help="delete a user's data from every store")
    forget.add_argument("--json", action="store_true", help="print counts as JSON")
    forget.set_defaults(run=run_forget)
    export = actions.add_parser("export", help="everything a user has, as one JSON document")
    export.add_argument("--out", default=None, help="write to this file (default: stdout)")
    export.set_defaults(run=run_export)
    show = actions.add_parser("show", help="what the agent remembers about a user, readable")
    show.set_defaults(run=run_show)
    restore = actions.add_parser(
        "restore", help="bring back a fact deleted by retention, within the recovery window"
    )
    restore.add_argument("fact_id", help="the fact's id (from `memory export`)")
    restore.set_defaults(run=run_restore)
    for step in (listing, forget, export, show, *[steps.choices[n] for n in ("accept", "reject")]):
        step.add_argument("--user", required=True, help="whose memory")
        add_org_argument(step)


def run_screen(args: argparse.Namespace) -> int:
    """One JSON verdict per input line; blank lines are skipped; exit 0 even if some fail.

    Each line is judged on its own, so a verdict never depends on what came before; `--batch`
    reads the lines as one extraction would (duplicates and category caps across lines, and
    an instruction split across neighbouring lines refused in both halves)."""
    policy = ValidationPolicy.from_env()
    if isinstance(sys.stdin, io.TextIOWrapper):
        sys.stdin.reconfigure(errors="replace")  # a stray byte must not end the run
    lines = (raw.rstrip("\n") for raw in sys.stdin)
    if args.batch:
        batch = [(line, args.category) for line in lines if line.strip()]
        for verdict in FactScreen(policy).check_batch(batch):
            print(json.dumps(verdict.as_json()), flush=True)
        return 0
    for line in lines:
        if line.strip():
            verdict = FactScreen(policy).check(line, args.category)
            print(json.dumps(verdict.as_json()), flush=True)
    return 0


def run_review_list(args: argparse.Namespace) -> int:
    statuses = ("review", "stored", "rejected", "dismissed") if args.all else ("review",)
    with open_persistence(announce=False) as persistence:
        items = list_candidates(persistence.pool, _scope(args), statuses)
    if not items and not args.json:
        print(f"nothing awaiting review for {args.user}{in_org(args)}")
    for item in items:
        if args.json:
            print(
                json.dumps(
                    {
                        "id": item.id,
                        "text": item.text,
                        "category": item.category,
                        "confidence": item.confidence,
                        "status": item.status,
                        "reasons": list(item.reasons),
                    }
                )
            )
        else:
            why = f"  ({'; '.join(item.reasons)})" if item.reasons else ""
            head = f"{item.id:>6}  {item.status:<9} {item.confidence:.2f}  [{item.category}]"
            print(f"{head} {item.text}{why}")
    return 0


def run_review_accept(args: argparse.Namespace) -> int:
    with open_persistence(announce=False) as persistence:
        fact_id = accept(persistence.pool, _scope(args), args.id, default_writer(persistence.pool))
    print(f"accepted {args.id}" + (f" as fact {fact_id}" if fact_id else ""))
    return 0


def run_review_reject(args: argparse.Namespace) -> int:
    with open_persistence(announce=False) as persistence:
        reject(persistence.pool, _scope(args), args.id)
    print(f"rejected {args.id}")
    return 0


def run_jobs(args: argparse.Namespace) -> int:
    """Counts per state and the newest dead letters; `--retry ID` requeues one."""
    with (
        open_persistence(announce=False, worker=True) as persistence,
        persistence.worker.connection() as conn,
    ):
        if args.retry == ALL_JOBS:
            requeued = jobs.retry_all_dead(conn)
            print(f"requeued {len(requeued)} job(s)" + (f": {requeued}" if requeued else ""))
            return 0
        if args.retry is not None:
            job_id = _job_id(args.retry)
            if not jobs.retry_dead(conn, job_id):
                raise RecollectError(
                    f"job {job_id} is not dead-lettered, or its thread already has a "
                    "pending job that will read the same messages"
                )
            print(f"job {job_id} requeued")
            return 0
        counts = jobs.status_counts(conn)
        print("jobs: " + (", ".join(f"{n} {state}" for state, n in counts.items()) or "none"))
        for dead in jobs.dead_letters(conn):
            print(
                f"dead {dead['id']}: user {dead['org_id']}/{dead['user_id']} thread "
                f"{dead['thread_id']} after {dead['attempts']} attempts: {dead['last_error']}"
            )
    return 0


def _job_id(raw: str) -> int:
    try:
        return int(raw)
    except ValueError:
        raise RecollectError(f"--retry takes a job id (a number), got {raw!r}") from None


def _scope(args: argparse.Namespace) -> Scope:
    return Scope.for_user(org_of(args), args.user)


def run_forget(args: argparse.Namespace) -> int:
    """Erase, then print rows deleted per store."""
    scope = _scope(args)
    with open_persistence(announce=False, worker=True) as persistence:
        deleted = forget_user(persistence.worker, scope)
    if args.json:
        print(json.dumps({"org_id": scope.org_id, "user_id": scope.user_id, "deleted": deleted}))
    else:
        print(f"forgot {scope.user_id} in {scope.org_id}:")
        for store, count in deleted.items():
            print(f"  {store}: {count} row(s) deleted")
    return 0


def run_export(args: argparse.Namespace) -> int:
    """One JSON document; `--out` writes it to a file (refusing a path in a missing folder)."""
    scope = _scope(args)
    out = Path(args.out) if args.out else None
    if out is not None and not out.parent.is_dir():
        raise RecollectError(f"cannot write {out}: folder {out.parent} does not exist")
    with open_persistence(announce=False) as persistence:
        document = export_user(persistence.pool, scope, persistence.checkpointer)
    text = json.dumps(document, indent=2, ensure_ascii=False)
    if out is None:
        print(text)
    else:
        out.write_text(text + "\n", encoding="utf-8")
        print(f"exported {scope.user_id} ({len(document['facts'])} facts) to {out}")
    return 0


def run_show(args: argparse.Namespace) -> int:
    with open_persistence(announce=False) as persistence:
        print(describe_user(persistence.pool, _scope(args)))
    return 0


def run_restore(args: argparse.Namespace) -> int:
    """An operator action across tenants: runs on the admin connection, like maintenance."""
    with (
        open_persistence(announce=False) as persistence,
        psycopg.connect(persistence.uri, **CONNECTION_KWARGS) as conn,
    ):
        restore_fact(conn, args.fact_id)
    print(f"restored {args.fact_id}")
    return 0
