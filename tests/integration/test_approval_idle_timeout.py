"""A decision outlasts the server's idle-in-transaction limit and still happens exactly once.

Managed Postgres often ends sessions left idle in a transaction after a short
`idle_in_transaction_session_timeout`. The reviewer's lock is held by such a transaction for the
whole decision; if the server ended it half-way, the lock would be gone and a second reviewer
could decide the same workflow. Here the database's limit is one second and the decision's
checkpoint write is held up for three, and a second reviewer tries while it waits.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata
from psycopg_pool import ConnectionPool

from graphs.approvals import Approvals
from recollect.approvals.errors import DecisionRefusedError
from recollect.approvals.machine import WorkflowState
from recollect.history.owned_checkpoints import ScopedPostgresSaver
from recollect.store.roles import app_uri
from recollect.store.server import open_pool

IDLE_LIMIT_S = 1
HELD_UP_S = 3 * IDLE_LIMIT_S
"""How long the decision's checkpoint write waits: well past the limit, so the server would
have ended an unattended lock transaction by then."""


class HeldUpSaver(ScopedPostgresSaver):
    """The checkpointer, whose first write once `armed` first runs `meanwhile`."""

    armed = False
    meanwhile: Any = None

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        if self.armed:
            self.armed = False
            self.meanwhile()
        return super().put(config, checkpoint, metadata, new_versions)


@pytest.fixture
def short_idle_pool(database_uri: str) -> Iterator[ConnectionPool[Any]]:
    """The app's pool on a database that ends a session idle in a transaction after 1 s."""
    with psycopg.connect(database_uri, autocommit=True) as conn:
        name = conn.info.dbname
        conn.execute(
            f"ALTER DATABASE \"{name}\" SET idle_in_transaction_session_timeout = '{IDLE_LIMIT_S}s'"
        )
    connections = open_pool(app_uri(database_uri), max_size=4, name="short-idle")
    yield connections
    connections.close()


def test_a_decision_longer_than_the_idle_limit_completes_once_and_keeps_others_out(
    short_idle_pool: ConnectionPool[Any],
) -> None:
    saver = HeldUpSaver(short_idle_pool)
    approvals = Approvals(short_idle_pool, saver)
    other_reviewer = Approvals(short_idle_pool)
    workflow_id = approvals.request(
        org_id="acme", user_id="dana", order_id="8842-B", amount="249.00", reason="charged twice"
    ).id
    refusals: list[Exception] = []

    def second_reviewer_tries() -> None:
        try:
            other_reviewer.approve(workflow_id, org_id="acme", by="omar")
        except Exception as exc:  # the thread's outcome is judged by the test
            refusals.append(exc)

    def held_up() -> None:
        time.sleep(HELD_UP_S)
        attempt = threading.Thread(target=second_reviewer_tries)
        attempt.start()
        attempt.join()

    saver.meanwhile = held_up
    saver.armed = True

    view = approvals.approve(workflow_id, org_id="acme", by="maria")

    assert not saver.armed, "the decision never wrote a checkpoint"
    assert len(refusals) == 1, "a second reviewer decided while the first was deciding"
    assert isinstance(refusals[0], DecisionRefusedError), refusals[0]
    assert "another reviewer is deciding" in str(refusals[0])
    assert view.state is WorkflowState.COMPLETED
    assert view.workflow.decided_by == "maria"
    assert [a.transition for a in view.audit].count("approve") == 1
    assert len(view.refunds) == 1
