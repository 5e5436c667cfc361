"""A turn and its extraction job are one unit: the job is scheduled by the transaction that
checkpoints the turn, so a turn whose checkpoint fails queues nothing, and the thread goes on
from its last checkpoint.

The fault is the database's own: a trigger refuses the checkpoint row that records the turn's
queue mark, as a server that dies between the `extract` step and its checkpoint would."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg_pool import ConnectionPool

from graphs.agent import make_graph
from recollect import thread_config, user_turn
from recollect.state.context import Context
from recollect.store.acting import acting_as
from recollect.store.scope import Scope
from tests.support.db import all_rows
from tests.support.scripted_openai import ScriptedOpenAI

CTX = Context(org_id="acme", user_id="dana", extract_every_turns=1, extract_after_idle_s=60)
THREAD = "t-crash"
REFUSE_TURN_CHECKPOINT = """
CREATE FUNCTION refuse_turn_checkpoint() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'the server went away' USING ERRCODE = 'admin_shutdown'; END $$;
CREATE TRIGGER refuse_turn_checkpoint BEFORE INSERT ON checkpoints FOR EACH ROW
WHEN (NEW.checkpoint->'channel_values' ? 'queued_through')
EXECUTE FUNCTION refuse_turn_checkpoint();
"""


@pytest.fixture
def failing_checkpoints(database_uri: str) -> Iterator[Any]:
    """Switch the fault on; the returned callable switches it off."""
    with psycopg.connect(database_uri, autocommit=True) as conn:
        conn.execute(REFUSE_TURN_CHECKPOINT)

        def heal() -> None:
            conn.execute("DROP TRIGGER refuse_turn_checkpoint ON checkpoints")

        yield heal


def _checkpointed_ids(agent: Any) -> set[str]:
    with acting_as(Scope.for_user(CTX.org_id, CTX.user_id)):
        values = agent.get_state(thread_config(THREAD)).values
    return {str(m.id) for m in values.get("messages", [])}


def test_a_turn_whose_checkpoint_fails_queues_nothing_and_the_next_turn_goes_on(
    pool: ConnectionPool[Any],
    checkpointer: PostgresSaver,
    scripted_llm: ScriptedOpenAI,
    failing_checkpoints: Any,
) -> None:
    agent = make_graph(checkpointer=checkpointer)
    scripted_llm.reply("Tea it is.")
    with pytest.raises(psycopg.OperationalError):
        agent.invoke(user_turn("I like tea number 6"), thread_config(THREAD), context=CTX)
    assert all_rows(pool, "SELECT * FROM memory_jobs") == []
    assert all_rows(pool, "SELECT * FROM memory_job_messages WHERE NOT held") == []

    failing_checkpoints()
    scripted_llm.reply("Coffee, noted.")
    agent.invoke(user_turn("I like coffee too"), thread_config(THREAD), context=CTX)
    sent = [m["content"] for m in scripted_llm.last_messages()]
    assert sent[-3:] == ["I like tea number 6", "Tea it is.", "I like coffee too"]
    [job] = all_rows(pool, "SELECT * FROM memory_jobs")
    assert job["status"] == "pending"
    rows = all_rows(pool, "SELECT message_id, held, content FROM memory_job_messages")
    assert not any(r["held"] for r in rows)
    assert {r["message_id"] for r in rows} == _checkpointed_ids(agent), "all and only these"
