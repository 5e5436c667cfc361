"""One user's data in every store we have, written through the app's own paths."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from langgraph.checkpoint.postgres import PostgresSaver
from psycopg_pool import ConnectionPool

from graphs.agent import make_graph
from recollect import thread_config, user_turn
from recollect.approvals.records import AuditEntry, RefundRequest
from recollect.approvals.store import (
    NewWorkflow,
    apply_refund,
    record_decision,
    record_transition,
    record_workflow,
)
from recollect.basestore.store import RecollectStore
from recollect.extraction import queue as jobs
from recollect.longterm.facts import LongTermMemory
from recollect.longterm.records import FactCategory, NewEpisode, NewFact, ProfileEntry
from recollect.longterm.rerankers import LATE_INTERACTION, load_reranker
from recollect.state.context import Context
from recollect.store.scope import REVIEWER, Scope
from recollect.store.tenancy import scoped
from recollect.store.threads import claim_thread
from recollect.trace.writer import WRITER

INSERT_REVIEW_ITEM = """
INSERT INTO fact_candidates (org_id, user_id, text, category, confidence, status, dedup_key)
VALUES (%(org_id)s, %(user_id)s, %(text)s, 'preference', 0.5, 'review', %(text)s)
"""


def populate_user(
    pool: ConnectionPool[Any], checkpointer: PostgresSaver, scope: Scope
) -> dict[str, str]:
    """Facts (one superseded) with embeddings, profile, episode, review item, job, approval
    workflow with audit and refund, a store item, and an agent thread with checkpoints;
    returns the ids."""
    tag = scope.user_id
    memory = LongTermMemory(pool, reranker=load_reranker(LATE_INTERACTION))  # + its encodings
    memory.ingest(
        scope,
        [NewFact(text=f"{tag} prefers tea", category=FactCategory.PREFERENCE, confidence=0.9)],
        [[1.0, 0.0, 0.0]],
    )
    memory.remember(
        scope,
        NewFact(text=f"{tag} lives in Porto", category=FactCategory.BIOGRAPHICAL,
                subject="city", confidence=0.9),
    )  # fmt: skip
    memory.remember(
        scope,
        NewFact(text=f"{tag} lives in Lisbon", category=FactCategory.BIOGRAPHICAL,
                subject="city", confidence=0.9),
    )  # fmt: skip
    memory.set_profile(scope, [ProfileEntry(key="name", value=tag.capitalize())])
    RecollectStore(memory).put(
        (scope.org_id, scope.user_id, "facts", "notes"), "seat", {"text": f"{tag} likes aisles"}
    )
    memory.record_episode(scope, NewEpisode(summary=f"{tag} asked about a refund"))
    with scoped(pool, scope) as conn:
        conn.execute(INSERT_REVIEW_ITEM, {"org_id": scope.org_id, "user_id": scope.user_id,
                                          "text": f"{tag} maybe likes jazz"})  # fmt: skip
    thread = f"{scope.org_id}-{tag}-thread"
    claim_thread(pool, scope, thread)
    agent = make_graph(checkpointer=checkpointer)
    ctx = Context(user_id=scope.user_id, org_id=scope.org_id)
    for text in ("hello", "my order is 8842-B"):
        agent.invoke(user_turn(text), config=thread_config(thread), context=ctx)
    WRITER.flush()  # the turns' memory traces
    workflow = f"wf-{scope.org_id}-{tag}"
    request = RefundRequest(
        order_id=f"8842-{tag}", amount=Decimal("12.50"), reason="arrived broken"
    )
    queue_job_and_refund(pool, scope, thread, workflow, request)
    return {"thread": thread, "workflow": workflow, "approval_thread": f"approval-{workflow}"}


def queue_job_and_refund(
    pool: ConnectionPool[Any], scope: Scope, thread: str, workflow: str, request: RefundRequest
) -> None:
    """A queued extraction job for `thread`, and an executed refund workflow started from it,
    approved by the organisation's reviewer `lead` (orders are unique per organisation)."""
    jobs.enqueue(
        pool,
        scope,
        thread,
        [jobs.BufferedMessage(f"{thread}-m1", "user", "I like tea")],
        debounce=jobs.Debounce(),
    )
    record_workflow(
        pool,
        scope,
        NewWorkflow(
            id=workflow,
            thread_id=f"approval-{workflow}",
            kind="refund",
            request=request,
            origin_thread_id=thread,
            created=AuditEntry(transition="create", from_state=None, to_state="draft",
                               actor=scope.user_id, at="2026-01-01T00:00:00+00:00", note=None),
        ),
    )  # fmt: skip
    at = datetime.now(UTC)
    submit = AuditEntry(transition="submit", from_state="draft", to_state="submitted_for_review",
                        actor=scope.user_id, at=at.isoformat(), note=None)  # fmt: skip
    record_transition(pool, scope, workflow, submit)
    lead = Scope.for_user(scope.org_id, "lead", frozenset({REVIEWER}))
    record_decision(pool, lead, workflow, "approve", None, at)
    result = apply_refund(pool, scope, workflow, request, "lead", at)
    assert result.outcome == "applied", result.reason
