"""`recollect approvals request|show|list|approve|reject|resume`: refund workflows from a shell.

Every command opens the database afresh, so a request made in one process is approved from
another, days later; `approve` runs the execution in the approving process.

The command line is the operator's console: it reviews. `list` and `show` see the whole
organisation (`--as USER` shows what that requester sees: their own workflows only), and
`approve`/`reject --by NAME` decide as the reviewer NAME, normalised first, so the requester
cannot approve their own refund under another spelling of their name (`ALICE`, `alice` with
a zero-width space, full-width letters); a name mixing scripts (a Cyrillic letter in a Latin
name) is refused. The database checks the same when the decision is written.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from recollect.approvals.errors import WorkflowNotFoundError
from recollect.approvals.machine import WorkflowState
from recollect.approvals.records import WorkflowRecord
from recollect.cli.graph_target import template_attribute
from recollect.cli.org import add_org_argument, in_org, org_of
from recollect.history.persistence import open_persistence
from recollect.store.errors import RecollectError
from recollect.store.pool import use_pool


def register(commands: Any) -> None:
    """Add `approvals` and its actions."""
    parser = commands.add_parser("approvals", help="refund requests that need a manager's approval")
    actions = parser.add_subparsers(dest="approvals_command", required=True)

    request = actions.add_parser("request", help="start a refund workflow; prints its id")
    request.add_argument("--user", required=True, help="who asks (the workflow's owner)")
    _org(request)
    request.add_argument("--order", required=True, help="order id")
    request.add_argument("--amount", required=True, help="amount, e.g. 249.00")
    request.add_argument("--currency", default="USD", help="ISO currency code (default USD)")
    request.add_argument("--reason", required=True, help="why the refund is due")
    request.set_defaults(run=run_request)

    show = actions.add_parser("show", help="state, audit trail and executed effects")
    show.add_argument("id")
    _org(show)
    show.add_argument("--json", action="store_true", help="print JSON")
    _viewer(show)
    show.set_defaults(run=run_show)

    listing = actions.add_parser("list", help="the organisation's workflows, oldest first")
    _org(listing)
    listing.add_argument("--status", choices=[s.value for s in WorkflowState], default=None)
    listing.add_argument("--user", default=None, help="only this requester's")
    listing.add_argument("--json", action="store_true", help="print JSON")
    _viewer(listing)
    listing.set_defaults(run=run_list)

    approve = actions.add_parser("approve", help="approve and execute a pending request")
    approve.add_argument("id")
    approve.add_argument(
        "--by", required=True, help="who approves (a reviewer; never the requester)"
    )
    approve.add_argument("--note", default=None, help="why (kept in the audit trail)")
    _org(approve)
    approve.set_defaults(run=run_approve)

    reject = actions.add_parser("reject", help="reject a pending request")
    reject.add_argument("id")
    reject.add_argument("--by", required=True, help="who rejects (a reviewer; never the requester)")
    reject.add_argument("--reason", required=True, help="why (kept in the audit trail)")
    _org(reject)
    reject.set_defaults(run=run_reject)

    resume = actions.add_parser("resume", help="finish workflows a crash stopped mid-run")
    resume.add_argument("id", nargs="?", help="one workflow (default: every stalled one)")
    _org(resume)
    resume.set_defaults(run=run_resume)


def _org(parser: argparse.ArgumentParser) -> None:
    add_org_argument(parser)


def _viewer(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--as",
        dest="viewer",
        default=None,
        metavar="USER",
        help="see only what this requester sees (default: the console sees the organisation's)",
    )


def _seen_by(args: argparse.Namespace) -> dict[str, Any]:
    """`show`/`workflows` keyword arguments: the console's view, or one requester's."""
    return {"viewer": args.viewer, "permissions": ()} if args.viewer else {}


def _org_of(args: argparse.Namespace) -> str:
    return org_of(args)


@contextmanager
def _approvals(args: argparse.Namespace) -> Iterator[Any]:
    """The workflows, over a fresh connection; "not found" says which org was searched."""
    with open_persistence(announce=False) as persistence, use_pool(persistence.pool):
        try:
            approvals = template_attribute("graphs.approvals:Approvals")
            yield approvals(persistence.pool, persistence.checkpointer)
        except WorkflowNotFoundError as exc:
            if args.org:
                raise
            raise RecollectError(
                f"{exc} (the default organisation; pass --org to look in another)"
            ) from exc


def run_request(args: argparse.Namespace) -> int:
    """Print the new workflow's id (alone on stdout, for scripts)."""
    with _approvals(args) as approvals:
        view = approvals.request(
            org_id=_org_of(args),
            user_id=args.user,
            order_id=args.order,
            amount=args.amount,
            currency=args.currency,
            reason=args.reason,
        )
    print(view.id)
    return 0


def run_show(args: argparse.Namespace) -> int:
    """One workflow in full."""
    with _approvals(args) as approvals:
        view = approvals.show(args.id, org_id=_org_of(args), **_seen_by(args))
    print(json.dumps(view_json(view), indent=2) if args.json else describe(view))
    return 0


def run_list(args: argparse.Namespace) -> int:
    """One line per workflow."""
    with _approvals(args) as approvals:
        records = approvals.workflows(
            org_id=_org_of(args), user_id=args.user, state=args.status, **_seen_by(args)
        )
    if args.json:
        print(json.dumps([r.model_dump(mode="json") for r in records], indent=2))
        return 0
    if not records:
        print(f"no approval workflows{in_org(args)}")
    for record in records:
        print(_line(record))
    return 0


def run_approve(args: argparse.Namespace) -> int:
    """Approve; execution runs here, and the outcome is printed."""
    with _approvals(args) as approvals:
        view = approvals.approve(args.id, org_id=_org_of(args), by=args.by, note=args.note)
    print(describe(view))
    return 0


def run_reject(args: argparse.Namespace) -> int:
    """Reject with a reason."""
    with _approvals(args) as approvals:
        view = approvals.reject(args.id, org_id=_org_of(args), by=args.by, reason=args.reason)
    print(describe(view))
    return 0


def run_resume(args: argparse.Namespace) -> int:
    """Carry stalled workflows to their end."""
    org = _org_of(args)
    with _approvals(args) as approvals:
        ids = [args.id] if args.id else approvals.stalled(org_id=org)
        if not ids:
            print(f"nothing to resume{in_org(args)}")
        for workflow_id in ids:
            print(describe(approvals.resume(workflow_id, org_id=org)))
    return 0


def view_json(view: Any) -> dict[str, Any]:
    """What `show --json` prints: state first, then the record, trail and effects."""
    return {
        "id": view.id,
        "state": view.state.value,
        "awaiting_review": view.awaiting_review,
        "next_steps": view.next_steps,
        "review_error": view.review_error,
        **view.model_dump(mode="json", include={"workflow", "audit", "refunds"}),
    }


def describe(view: Any) -> str:
    """A few readable lines."""
    record = view.workflow
    lines = [_line(record, view.state)]
    if view.awaiting_review:
        lines.append(
            "  awaiting review: `recollect approvals approve|reject " + record.id + " ...`"
        )
    if view.review_error:
        lines.append(f"  last answer refused: {view.review_error}")
    for entry in view.audit:
        note = f" — {entry.note}" if entry.note else ""
        lines.append(
            f"  {entry.at.isoformat(timespec='seconds')}  {entry.transition:<9} "
            f"→ {entry.to_state.value:<20} by {entry.actor}{note}"
        )
    for refund in view.refunds:
        lines.append(
            f"  refund #{refund.id}: {refund.amount} {refund.currency} on order "
            f"{refund.order_id}, approved by {refund.approved_by}"
        )
    return "\n".join(lines)


def _line(record: WorkflowRecord, state: WorkflowState | None = None) -> str:
    request = record.request
    return (
        f"{record.id}  {(state or record.state).value:<20} {record.user_id}@{record.org_id}  "
        f"order {request.get('order_id')}  {request.get('amount')} {request.get('currency')}"
    )
