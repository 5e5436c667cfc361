"""`langgraph dev`: what creation stamps stays, and a cron is its creator's.

A thread's `owner` and `org` are set from the key when it is created and no later update moves
them (so nobody plants a thread in someone else's list). A cron is checked when it is created as
a run is — message size, the identity its context names, a reviewer's key — and each run it
starts runs as its creator.
"""

from __future__ import annotations

import time
from typing import Any

from tests.support.langgraph_dev import ALICE_KEY, BOB_KEY, MARIA_KEY, client_for, status_of

HELLO = {"messages": [{"role": "human", "content": "hi"}]}
YEARLY = "0 0 1 1 *"
CRON_WAIT_S = 150
"""A cron fires at the next whole minute; the scheduler then takes a moment to start it."""


def test_owner_and_org_stay_what_creation_stamped(served_module: str) -> None:
    alice = client_for(served_module, ALICE_KEY)
    bob = client_for(served_module, BOB_KEY)
    thread = alice.threads.create(metadata={"topic": "PIN reset"})["thread_id"]
    for metadata in ({"owner": "acme/bob"}, {"org": "globex"}, {"owner": "globex/bob"}):
        assert status_of(lambda m=metadata: alice.threads.update(thread, metadata=m)) == 403
        assert status_of(lambda m=metadata: alice.threads.create(metadata=m)) == 403
    assert thread not in [t["thread_id"] for t in bob.threads.search(limit=100)]
    same = alice.threads.update(thread, metadata={"owner": "acme/alice", "topic": "x"})
    assert same["metadata"]["owner"] == "acme/alice"
    assert same["metadata"]["org"] == "acme"
    assert status_of(lambda: bob.threads.update(thread, metadata={"owner": "acme/bob"})) == 404


def test_a_cron_is_checked_when_it_is_created(served_module: str) -> None:
    alice = client_for(served_module, ALICE_KEY)
    bob = client_for(served_module, BOB_KEY)
    maria = client_for(served_module, MARIA_KEY)
    crons_before = alice.crons.count()
    huge = {"messages": [{"role": "human", "content": "x" * 200_000}]}
    assert status_of(lambda: alice.crons.create("agent", schedule=YEARLY, input=huge)) == 413
    for context in ({"user_id": "bob"}, {"org_id": "globex"}):
        status = status_of(
            lambda c=context: alice.crons.create("agent", schedule=YEARLY, input=HELLO, context=c)
        )
        assert status == 403, context
    for graph in ("agent", "approval"):
        status = status_of(lambda g=graph: maria.crons.create(g, schedule=YEARLY, input=HELLO))
        assert status == 403, graph
    thread = alice.threads.create()["thread_id"]
    status = status_of(
        lambda: bob.crons.create_for_thread(thread, "agent", schedule=YEARLY, input=HELLO)
    )
    assert status == 404
    assert alice.crons.count() == crons_before


def test_a_cron_runs_as_its_creator(served_module: str) -> None:
    alice = client_for(served_module, ALICE_KEY)
    bob = client_for(served_module, BOB_KEY)
    thread = alice.threads.create()["thread_id"]
    cron = alice.crons.create_for_thread(
        thread, "agent", schedule="* * * * *", input=HELLO, context={"extract_after_idle_s": 3600}
    )
    assert cron["metadata"]["owner"] == "acme/alice"
    assert cron["cron_id"] not in [c["cron_id"] for c in bob.crons.search(limit=1000)]
    deadline = time.monotonic() + CRON_WAIT_S
    runs: list[Any] = []
    while time.monotonic() < deadline:
        runs = [r for r in alice.runs.list(thread) if r["status"] == "success"]
        if runs:
            break
        time.sleep(1)
    alice.crons.delete(cron["cron_id"])
    assert runs, "the cron never ran"
    assert runs[0]["metadata"]["owner"] == "acme/alice"
    state = alice.threads.get_state(thread)
    assert state["values"]["messages"][-1]["content"].startswith("[offline model]")
