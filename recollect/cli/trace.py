"""`recollect trace` and `recollect stats`: what went into each turn's prompt and why, and
what memory costs and does over time, read from the memory traces (`RECOLLECT_TRACE`)."""

from __future__ import annotations

import argparse
import json
import os
import re
from datetime import datetime, timedelta
from typing import Any

from recollect.cli.org import add_org_argument, in_org, org_of
from recollect.history.persistence import open_persistence
from recollect.store import clock
from recollect.store.errors import RecollectError
from recollect.store.scope import Scope
from recollect.trace.find import story
from recollect.trace.metrics import summarise
from recollect.trace.store import (
    TraceRow,
    matching_facts,
    memory_counts,
    thread_traces,
    traces_since,
)

MAX_FIND_CHARS = 200
MAX_THREAD_CHARS = 200
_SINCE = re.compile(r"^(\d{1,6})([smhd])$")
_UNIT = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}


def register(commands: Any) -> None:
    """Add `trace` and `stats`."""
    trace = commands.add_parser("trace", help="what went into a thread's prompts, turn by turn")
    trace.add_argument("--thread", required=True, help="the thread id `recollect chat` printed")
    trace.add_argument("--turn", type=int, default=None, help="only this turn (1 is the first)")
    trace.add_argument(
        "--find",
        default=None,
        metavar="TEXT",
        help="was TEXT said, extracted, stored, recalled, shown, and where did it stop?",
    )
    trace.add_argument("--json", action="store_true", help="JSON instead of a readable table")
    trace.set_defaults(run=run_trace)
    stats = commands.add_parser("stats", help="memory metrics from a user's traces")
    stats.add_argument(
        "--since", default="7d", help="a duration (30m, 12h, 7d) or a date (2026-01-31)"
    )
    stats.add_argument("--json", action="store_true", help="one JSON object")
    stats.set_defaults(run=run_stats)
    for parser in (trace, stats):
        parser.add_argument(
            "--user",
            default=None,
            help="whose traces (default: RECOLLECT_USER_ID, else 'local-user')",
        )
        add_org_argument(parser)


_CHAT_THREAD = re.compile(r"^(.+)-[0-9a-f]{8}$")
"""How `recollect chat` names a thread: its user's id, a dash, eight hex digits."""


def _scope(args: argparse.Namespace) -> Scope:
    user = args.user or os.environ.get("RECOLLECT_USER_ID") or "local-user"
    return Scope.for_user(org_of(args), user)


def _thread_scopes(args: argparse.Namespace) -> list[Scope]:
    """Whose thread it may be: `--user`'s alone when given; else the user `recollect chat`
    named it for, then the default user."""
    scope = _scope(args)
    named = None if args.user else _CHAT_THREAD.match(args.thread)
    if named is None or named.group(1) == scope.user_id:
        return [scope]
    return [Scope.for_user(org_of(args), named.group(1)), scope]


def _checked(args: argparse.Namespace) -> None:
    """Bad input is one line, before any database work."""
    if not args.thread.strip() or len(args.thread) > MAX_THREAD_CHARS:
        raise RecollectError(f"--thread must be 1 to {MAX_THREAD_CHARS} characters")
    if args.turn is not None and args.turn < 1:
        raise RecollectError(f"--turn counts from 1, got {args.turn}")
    if args.find is not None and not 1 <= len(args.find.strip()) <= MAX_FIND_CHARS:
        raise RecollectError(f"--find takes 1 to {MAX_FIND_CHARS} characters of text")


def run_trace(args: argparse.Namespace) -> int:
    """The thread's turns as tables (or JSON); with `--find`, the story of one text."""
    _checked(args)
    rows: list[TraceRow] = []
    facts: list[dict[str, Any]] = []
    with open_persistence(announce=False) as persistence:
        for scope in _thread_scopes(args):
            rows = thread_traces(persistence.pool, scope, args.thread, args.turn)
            facts = matching_facts(persistence.pool, scope, args.find.strip()) if args.find else []
            if rows or facts:
                break
    if not rows and not facts:
        where = f" turn {args.turn} of" if args.turn else ""
        users = " or ".join(repr(s.user_id) for s in _thread_scopes(args))
        hint = "is RECOLLECT_TRACE off?" if args.user else "pass --user with its owner's id"
        raise RecollectError(
            f"no traces for{where} thread {args.thread!r} of user {users}{in_org(args)} ({hint})"
        )
    if args.find:
        found = {"thread": args.thread, **story(rows, facts, args.find.strip())}
        print(
            json.dumps(found, default=str, ensure_ascii=False) if args.json else story_text(found)
        )
        return 0
    if args.json:
        print(json.dumps([_as_json(r) for r in rows], default=str, ensure_ascii=False))
        return 0
    for row in rows:
        print(_table(row))
    return 0


def _as_json(row: TraceRow) -> dict[str, Any]:
    return {
        "turn": row.turn,
        "kind": row.kind,
        "checkpoint_bytes": row.checkpoint_bytes,
        "created_at": row.created_at.isoformat(),
        **row.trace,
    }


def story_text(found: dict[str, Any]) -> str:
    """A `--find` story as lines a person reads."""
    lines = [f"{found['find']!r} in thread {found['thread']}: {found['stopped']}"]
    for turn in found["turns"]:
        label = "turn" if turn["kind"] == "turn" else "memory job after turn"
        lines += [f"  {label} {turn['turn']}:"] + [f"    - {e}" for e in turn["events"]]
    for fact in found["memory"]:
        lines.append(f"  memory: {fact['id'][-8:]} {fact['status']}: {fact['text']}")
    return "\n".join(lines)


def _table(row: TraceRow) -> str:
    t = row.trace
    if row.kind == "extraction":
        lines = [f"memory job after turn {row.turn} (job {t.get('job_id')}):"]
        for f in t.get("facts", []):
            why = f"  ({'; '.join(f['reasons'])})" if f.get("reasons") else ""
            lines.append(f"  {f['verdict']:<10} {f['confidence']:.2f}  {f['text']}{why}")
        return "\n".join(lines)
    said = (t.get("user_message") or {}).get("text", "")
    lines = [
        f"turn {row.turn}  model {t.get('model')}  checkpoint {row.checkpoint_bytes or 0:,} B",
        f"  user: {said[:100]}",
        f"  {'category':<14}{'tokens':>8}{'budget':>8}",
    ]
    budgets = t.get("budgets", {})
    for key in ("system", "pinned", "profile", "recalled", "summary", "tool_results", "history"):
        if key in t.get("tokens", {}):
            budget = budgets.get(key, "")
            lines.append(f"  {key:<14}{t['tokens'][key]:>8}{budget!s:>8}")
    total = t.get("tokens", {}).get("total", 0)
    lines.append(f"  {'total':<14}{total:>8}{budgets.get('total', '')!s:>8}")
    shown = set(t.get("recalled_shown", []))
    if t.get("recall"):
        lines.append("  recall     score  dense lexical rerank recency conf  outcome")
    for c in t.get("recall", []):
        outcome = "shown" if c["id"] in shown else (c.get("dropped") or "prompt budget")
        rerank = "-" if c.get("rerank") is None else f"{c['rerank']:.2f}"
        lines.append(
            f"  {c['id'][-8:]} {c['score']:6.3f} {c.get('dense_rank') or '-':>6} "
            f"{c.get('lexical_rank') or '-':>7} {rerank:>6} {c['recency']:7.2f} "
            f"{c['confidence']:4.2f}  {outcome:<13} {c['text'][:60]}"
        )
    pinned = t.get("pinned") or {}
    for state in ("shown", "hidden"):
        if pinned.get(state):
            values = ", ".join(f"{p['kind']}={p['value']}" for p in pinned[state])
            lines.append(f"  pinned {state}: {values}")
    fold = t.get("fold")
    version = (t.get("summary") or {}).get("version", 0)
    if fold:
        lines.append(f"  summary v{version}: folded {len(fold['folded_ids'])} ({fold['how']})")
    if t.get("trimmed"):
        lines.append(f"  trimmed: {', '.join(t['trimmed'])}")
    return "\n".join(lines)


def since_moment(raw: str, now: datetime) -> datetime:
    """`30m`, `12h`, `7d` before now, or an ISO date/time; anything else is one line."""
    match = _SINCE.match(raw.strip())
    if match:
        return now - timedelta(**{_UNIT[match.group(2)]: int(match.group(1))})
    try:
        moment = datetime.fromisoformat(raw.strip())
    except ValueError:
        raise RecollectError(
            f"--since takes a duration (30m, 12h, 7d) or a date (2026-01-31), got {raw[:40]!r}"
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=now.tzinfo)


def run_stats(args: argparse.Namespace) -> int:
    """The user's memory metrics since `--since`."""
    scope = _scope(args)
    since = since_moment(args.since, clock.now())
    with open_persistence(announce=False) as persistence:
        rows = traces_since(persistence.pool, scope, since)
        counts = memory_counts(persistence.pool, scope, since)
    figures = {"user": scope.user_id, "org": scope.org_id, "since": since.isoformat()}
    figures |= summarise(rows, counts)
    if args.json:
        print(json.dumps(figures))
        return 0
    for key, value in figures.items():
        print(f"{key:<34}{'-' if value is None else value}")
    return 0
