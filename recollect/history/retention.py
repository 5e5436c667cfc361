"""Checkpoint retention: keep the last N turns of a thread, delete the older checkpoints.

LangGraph writes a checkpoint after every step and never deletes one, so a thread's rows grow
with every turn even when its state is bounded. `prune(strategy="keep_latest")` from
langgraph-checkpoint-postgres keeps only the newest checkpoint, which also throws away time
travel. These savers keep the newest `retain` turns instead, with the stock prune's semantics:

- a turn is a run: it starts at the root namespace's `input` checkpoint, so a tool-heavy turn
  of twenty steps costs one turn of the rewind window, like a one-step turn;
- one transaction on one snapshot (repeatable read) per prune, so a run appending meanwhile
  is neither seen nor deleted;
- a subgraph call's namespace (`node:task_id`) goes with the root checkpoint it started from,
  and a `checkpointer=True` subgraph's namespace keeps its latest checkpoint;
- a kept checkpoint whose parent is deleted is left with no parent (never a dangling pointer),
  and blobs only deleted checkpoints used are deleted.

The prune runs once per turn, when the turn's `input` checkpoint is written, in that put's
transaction: one read (`PLAN_SQL`) that travels with the put, then deletes that need no answer
and so travel with the commit, so a pruning turn costs no round trip more than any other.
Every statement is a named constant below, so row-level security can be reviewed against
each one.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg import AsyncCursor, Cursor
from psycopg.rows import DictRow

DEFAULT_RETENTION = 4
"""Turns (runs) of each thread kept for rewinding and forking; 0 keeps every checkpoint."""
RETENTION_ENV = "RECOLLECT_CHECKPOINT_RETENTION"

SNAPSHOT_SQL = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ"
PLAN_SQL = """
SELECT '' AS checkpoint_ns,
       (SELECT checkpoint_id FROM checkpoints
        WHERE thread_id = %(thread_id)s AND checkpoint_ns = '' AND metadata ->> 'source' = 'input'
        ORDER BY checkpoint_id DESC
        OFFSET %(offset)s LIMIT 1) AS head,
       NULL AS root
UNION ALL
(SELECT DISTINCT ON (checkpoint_ns)
     checkpoint_ns, checkpoint_id AS head, metadata -> 'parents' ->> '' AS root
 FROM checkpoints
 WHERE thread_id = %(thread_id)s AND checkpoint_ns <> ''
 ORDER BY checkpoint_ns, checkpoint_id DESC)
"""
"""The prune's one read: for the root namespace, the `input` checkpoint that starts the oldest
kept turn (NULL when the thread has no more turns than are kept); for each subgraph namespace,
its latest checkpoint and the root checkpoint its call started from."""
DELETE_NAMESPACE_CHECKPOINTS_SQL = """
DELETE FROM checkpoints WHERE thread_id = %(thread_id)s AND checkpoint_ns = ANY(%(namespaces)s)
"""
DELETE_NAMESPACE_WRITES_SQL = """
DELETE FROM checkpoint_writes
WHERE thread_id = %(thread_id)s AND checkpoint_ns = ANY(%(namespaces)s)
"""
DELETE_NAMESPACE_BLOBS_SQL = """
DELETE FROM checkpoint_blobs
WHERE thread_id = %(thread_id)s AND checkpoint_ns = ANY(%(namespaces)s)
"""
DELETE_WRITES_SQL = """
DELETE FROM checkpoint_writes
WHERE thread_id = %(thread_id)s AND checkpoint_ns = %(checkpoint_ns)s
  AND checkpoint_id < %(cutoff)s
"""
DELETE_BLOBS_SQL = """
DELETE FROM checkpoint_blobs
WHERE thread_id = %(thread_id)s AND checkpoint_ns = %(checkpoint_ns)s
  AND (channel, version) IN (
    SELECT v.key, v.value
    FROM checkpoints c
    CROSS JOIN LATERAL jsonb_each_text(c.checkpoint -> 'channel_versions') AS v
    WHERE c.thread_id = %(thread_id)s AND c.checkpoint_ns = %(checkpoint_ns)s
      AND c.checkpoint_id < %(cutoff)s
    EXCEPT
    SELECT v.key, v.value
    FROM checkpoints c
    CROSS JOIN LATERAL jsonb_each_text(c.checkpoint -> 'channel_versions') AS v
    WHERE c.thread_id = %(thread_id)s AND c.checkpoint_ns = %(checkpoint_ns)s
      AND c.checkpoint_id >= %(cutoff)s
  )
"""
"""The blob versions the expired checkpoints use and no kept one does; it runs before the
checkpoints' own delete, so both sides are still there to compare."""
DELETE_CHECKPOINTS_SQL = """
DELETE FROM checkpoints
WHERE thread_id = %(thread_id)s AND checkpoint_ns = %(checkpoint_ns)s
  AND checkpoint_id < %(cutoff)s
"""
CLEAR_PARENTS_SQL = """
UPDATE checkpoints SET parent_checkpoint_id = NULL
WHERE thread_id = %(thread_id)s AND checkpoint_ns = %(checkpoint_ns)s
  AND parent_checkpoint_id < %(cutoff)s
"""
"""A kept checkpoint whose parent is older than the cutoff has lost it: no dangling pointer."""

_Statements = Generator[tuple[str, Mapping[str, Any], bool], list[DictRow], None]


def retention_from_env() -> int:
    """`RECOLLECT_CHECKPOINT_RETENTION`: turns kept per thread; 0 keeps every checkpoint."""
    raw = os.environ.get(RETENTION_ENV, "")
    try:
        value = int(raw) if raw else DEFAULT_RETENTION
    except ValueError as exc:
        msg = f"{RETENTION_ENV} must be a whole number, got {raw!r}"
        raise ValueError(msg) from exc
    if value < 0:
        msg = f"{RETENTION_ENV} must be 0 or more, got {value}"
        raise ValueError(msg)
    return value


def _prune_now(config: RunnableConfig, metadata: CheckpointMetadata) -> bool:
    """Once per turn: when the root graph writes the turn's `input` checkpoint."""
    namespace = (config.get("configurable") or {}).get("checkpoint_ns", "")
    return not namespace and metadata.get("source") == "input"


def keep_turns(thread_id: str, retain: int) -> _Statements:
    """The statements of one thread's prune, for `_run` and `_arun`; each comes with whether
    its rows are sent back. They all read one snapshot. Only the plan is waited for: every
    delete after it needs no answer, so in a pipeline they travel with the commit."""
    base = {"thread_id": thread_id}
    yield SNAPSHOT_SQL, {}, False
    plan = yield PLAN_SQL, {**base, "offset": retain - 1}, True
    cutoff = next((r["head"] for r in plan if r["checkpoint_ns"] == ""), None)
    if cutoff is None:
        return  # no more turns than `retain`: nothing to delete
    heads = [r for r in plan if r["checkpoint_ns"] != ""]
    # A call's namespace has its task id after a ":"; it goes with its (older) root checkpoint.
    calls = [
        h["checkpoint_ns"]
        for h in heads
        if ":" in h["checkpoint_ns"] and h["root"] is not None and h["root"] < cutoff
    ]
    if calls:
        for sql in (
            DELETE_NAMESPACE_WRITES_SQL,
            DELETE_NAMESPACE_CHECKPOINTS_SQL,
            DELETE_NAMESPACE_BLOBS_SQL,
        ):
            yield sql, {**base, "namespaces": calls}, False
    # The root keeps its last `retain` turns; a `checkpointer=True` subgraph keeps its head.
    cutoffs = {"": cutoff}
    cutoffs.update({h["checkpoint_ns"]: h["head"] for h in heads if ":" not in h["checkpoint_ns"]})
    for namespace, oldest_kept in cutoffs.items():
        params = {**base, "checkpoint_ns": namespace, "cutoff": oldest_kept}
        for sql in (DELETE_WRITES_SQL, DELETE_BLOBS_SQL, DELETE_CHECKPOINTS_SQL, CLEAR_PARENTS_SQL):
            yield sql, params, False


def _run(cur: Cursor[DictRow], statements: _Statements) -> None:
    try:
        sql, params, fetch = next(statements)
        while True:
            cur.execute(sql, params, prepare=False)
            sql, params, fetch = statements.send(cur.fetchall() if fetch else [])
    except StopIteration:
        pass


async def _arun(cur: AsyncCursor[DictRow], statements: _Statements) -> None:
    try:
        sql, params, fetch = next(statements)
        while True:
            await cur.execute(sql, params, prepare=False)
            rows = await cur.fetchall() if fetch else []
            sql, params, fetch = statements.send(rows)
    except StopIteration:
        pass


def _thread_of(config: RunnableConfig) -> str:
    return str(config["configurable"]["thread_id"])


class RetainingPostgresSaver(PostgresSaver):
    """`PostgresSaver` that keeps only the newest `retain` turns of each thread."""

    retain: int = DEFAULT_RETENTION

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        saved = super().put(config, checkpoint, metadata, new_versions)
        if self.retain > 0 and _prune_now(config, metadata):
            self.prune_thread(saved)
        return saved

    def prune_thread(self, config: RunnableConfig) -> None:
        """Delete the turns beyond `retain` (with their subgraph calls, writes and blobs)."""
        with self._cursor() as cur:
            if self.pipe:
                self.pipe.sync()  # the transaction must start with its isolation level
            with cur.connection.transaction():
                _run(cur, keep_turns(_thread_of(config), max(self.retain, 1)))


class AsyncRetainingPostgresSaver(AsyncPostgresSaver):
    """The async twin of `RetainingPostgresSaver`, for `langgraph dev` and the platform."""

    retain: int = DEFAULT_RETENTION

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        saved = await super().aput(config, checkpoint, metadata, new_versions)
        if self.retain > 0 and _prune_now(config, metadata):
            await self.aprune_thread(saved)
        return saved

    async def aprune_thread(self, config: RunnableConfig) -> None:
        """Delete the turns beyond `retain` (with their subgraph calls, writes and blobs)."""
        async with self._cursor() as cur:
            if self.pipe:
                await self.pipe.sync()
            async with cur.connection.transaction():
                await _arun(cur, keep_turns(_thread_of(config), max(self.retain, 1)))
