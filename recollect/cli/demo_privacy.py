"""The demo's last act: what is remembered about the user, incognito and team memory,
a rehearsal of next year's maintenance, and "forget me" down to zero rows."""

from __future__ import annotations

from datetime import timedelta

import psycopg

from recollect.cli.maintenance import render
from recollect.history.persistence import open_persistence
from recollect.longterm.facts import LongTermMemory
from recollect.longterm.records import FactCategory, NewFact
from recollect.privacy.export import describe_user, export_user
from recollect.privacy.forget import forget_user
from recollect.privacy.lifecycle import RetentionPolicy, end_session, run_maintenance
from recollect.state.context import Context
from recollect.store import clock
from recollect.store.scope import ORG_ADMIN, Scope
from recollect.store.server import CONNECTION_KWARGS

EXPORT_SECTIONS = ("facts", "profile", "episodes", "threads", "workflows", "review_queue")


def show_privacy(ctx: Context) -> None:
    """Print each step; everything runs against the same database the demo used."""
    user = Scope.for_user(ctx.org_id, ctx.user_id)
    with open_persistence(announce=False, worker=True) as persistence:
        pool = persistence.pool
        memory = LongTermMemory(pool)
        print(describe_user(pool, user))

        document = export_user(pool, user, persistence.checkpointer)
        counts = ", ".join(f"{len(document[k])} {k}" for k in EXPORT_SECTIONS)
        print(f"\n`recollect memory export` would write one JSON document: {counts}")

        incognito = Scope.for_session(ctx.org_id, ctx.user_id, "incognito-1")
        memory.remember(
            incognito, NewFact(text="Is planning a surprise party", category=FactCategory.GOAL)
        )
        seen = [f.text for f in memory.facts(incognito)]
        print(f"\nincognito session sees {len(seen)} facts (its own + durable); durable sees "
              f"{len(memory.facts(user))}")  # fmt: skip
        print(f"session ends: {end_session(pool, incognito)} deleted, nothing outlives it")

        teammate = Scope.for_org(ctx.org_id, f"{ctx.user_id}-teammate", frozenset({ORG_ADMIN}))
        memory.remember(
            teammate,
            NewFact(text="The team deploys on Fridays", category=FactCategory.PREFERENCE),
        )
        shared = [f.text for f in memory.facts(Scope.for_org(ctx.org_id, ctx.user_id))]
        print(f"a teammate shared a team convention; {ctx.user_id} reads it: {shared}")

        memory.remember(
            user, NewFact(text="Wants to ship the billing revamp", category=FactCategory.GOAL)
        )
        with psycopg.connect(persistence.uri, **CONNECTION_KWARGS) as admin:
            report = run_maintenance(
                admin,
                RetentionPolicy(),
                now=clock.now() + timedelta(days=400),
                dry_run=True,
            )
        print("\nmaintenance, rehearsed 400 days from now (a goal is kept 30 days unless it is "
              "reinforced; preferences for ever):")  # fmt: skip
        print(render(report))

        deleted = forget_user(persistence.worker, user)
        total = sum(deleted.values())
        stores = ", ".join(f"{k} {v}" for k, v in deleted.items() if v)
        print(f"\n`recollect memory forget`: {total} rows deleted ({stores}); verified 0 remain")
