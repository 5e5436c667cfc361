"""Checkpoint retention: keep the last N checkpoints of a thread, delete the older ones.

LangGraph writes a checkpoint after every step and never deletes one, so a thread's rows grow
with every turn even when its state is bounded. `prune(strategy="keep_latest")` from
langgraph-checkpoint-postgres keeps only the newest checkpoint, which also throws away time
travel; retaining the last N keeps a few turns to rewind to (`get_state_history`, forking
from a recent checkpoint) at a bounded cost. The savers below prune after each write, in the
namespace just written, every `retain // 2` steps: a thread holds between `retain` and
`retain * 1.5` checkpoints, and a turn pays for a fraction of one prune, not one per step.
"""

from __future__ import annotations

import os
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

DEFAULT_RETENTION = 20
"""About four turns of the agent graph (one checkpoint per step)."""

FIRST_EXPIRED_SQL = """
SELECT checkpoint_id FROM checkpoints
WHERE thread_id = %(thread_id)s AND checkpoint_ns = %(checkpoint_ns)s
ORDER BY checkpoint_id DESC
OFFSET %(keep)s LIMIT 1
"""
DELETE_EXPIRED_CHECKPOINTS_SQL = """
DELETE FROM checkpoints
WHERE thread_id = %(thread_id)s AND checkpoint_ns = %(checkpoint_ns)s
  AND checkpoint_id <= %(cutoff)s
"""
DELETE_EXPIRED_WRITES_SQL = """
DELETE FROM checkpoint_writes
WHERE thread_id = %(thread_id)s AND checkpoint_ns = %(checkpoint_ns)s
  AND checkpoint_id <= %(cutoff)s
"""
DELETE_UNREFERENCED_BLOBS_SQL = """
DELETE FROM checkpoint_blobs b
WHERE b.thread_id = %(thread_id)s AND b.checkpoint_ns = %(checkpoint_ns)s
  AND NOT EXISTS (
    SELECT 1 FROM checkpoints c
    WHERE c.thread_id = b.thread_id AND c.checkpoint_ns = b.checkpoint_ns
      AND c.checkpoint -> 'channel_versions' ->> b.channel = b.version
  )
"""
PRUNE_SQL = (
    DELETE_EXPIRED_WRITES_SQL,
    DELETE_EXPIRED_CHECKPOINTS_SQL,
    DELETE_UNREFERENCED_BLOBS_SQL,
)


def retention_from_env() -> int:
    """`RECOLLECT_CHECKPOINT_RETENTION`: checkpoints kept per thread; 0 keeps every one."""
    raw = os.environ.get("RECOLLECT_CHECKPOINT_RETENTION", "")
    try:
        value = int(raw) if raw else DEFAULT_RETENTION
    except ValueError as exc:
        msg = f"RECOLLECT_CHECKPOINT_RETENTION must be a whole number, got {raw!r}"
        raise ValueError(msg) from exc
    if value < 0:
        msg = f"RECOLLECT_CHECKPOINT_RETENTION must be 0 or more, got {value}"
        raise ValueError(msg)
    return value


def _prune_now(metadata: CheckpointMetadata, retain: int) -> bool:
    """Every `retain // 2` steps; steps keep counting across the runs of a thread."""
    step = metadata.get("step", 0)
    return step % max(retain // 2, 1) == 0


def _params(config: RunnableConfig, keep: int) -> dict[str, Any]:
    configurable = config["configurable"]
    return {
        "thread_id": str(configurable["thread_id"]),
        "checkpoint_ns": configurable.get("checkpoint_ns", ""),
        "keep": keep,
    }


class RetainingPostgresSaver(PostgresSaver):
    """`PostgresSaver` that keeps only the newest `retain` checkpoints of each thread."""

    retain: int = DEFAULT_RETENTION

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        saved = super().put(config, checkpoint, metadata, new_versions)
        if self.retain > 0 and _prune_now(metadata, self.retain):
            self.prune_thread(saved)
        return saved

    def prune_thread(self, config: RunnableConfig) -> None:
        """Delete the checkpoints (with their writes and now unused blobs) beyond `retain`."""
        params = _params(config, self.retain)
        with self._cursor() as cur, cur.connection.transaction():
            row = cur.execute(FIRST_EXPIRED_SQL, params).fetchone()
            if row is None:
                return
            params["cutoff"] = row["checkpoint_id"]
            for sql in PRUNE_SQL:
                cur.execute(sql, params)


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
        if self.retain > 0 and _prune_now(metadata, self.retain):
            await self.aprune_thread(saved)
        return saved

    async def aprune_thread(self, config: RunnableConfig) -> None:
        """Delete the checkpoints (with their writes and now unused blobs) beyond `retain`."""
        params = _params(config, self.retain)
        async with self._cursor() as cur, cur.connection.transaction():
            await cur.execute(FIRST_EXPIRED_SQL, params)
            row = await cur.fetchone()
            if row is None:
                return
            params["cutoff"] = row["checkpoint_id"]
            for sql in PRUNE_SQL:
                await cur.execute(sql, params)
