"""What a checkpoint that commits a turn releases to the extraction queue.

The `extract` step buffers a turn's messages held (`extraction.queue.BUFFER`) and marks the
turn in `queued_through`; the checkpoint that carries that mark is the turn committed, and the
saver runs `extraction.queue.RELEASE` for the messages it holds in the same transaction. A turn
whose checkpoint never commits (the database died, the run failed or was rolled back) never
schedules a job.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import ChannelVersions, Checkpoint

from recollect.langgraph_private import CONFIG_KEY_CHECKPOINTER

TURN_MARK = "queued_through"
"""The state channel the `extract` step writes once it has buffered a turn."""
MESSAGE_CHANNELS = ("messages", "unfolded")
"""Where a committed turn's messages are: the history, and what this very turn trimmed."""


class ReleasesQueuedTurns:
    """Marks a saver that runs the release when it commits a turn (read through LangGraph's
    wrappers, which pass attribute reads to the saver they wrap)."""

    releases_queued_turns = True


def release_params(
    config: RunnableConfig, checkpoint: Checkpoint, new_versions: ChannelVersions
) -> dict[str, Any] | None:
    """The release's parameters when this checkpoint commits a turn's mark; else None."""
    if TURN_MARK not in new_versions:
        return None
    thread_id = (config.get("configurable") or {}).get("thread_id")
    values = checkpoint.get("channel_values") or {}
    ids = [
        str(message.id)
        for channel in MESSAGE_CHANNELS
        for message in values.get(channel) or ()
        if getattr(message, "id", None)
    ]
    return {"thread_id": str(thread_id), "ids": ids} if thread_id and ids else None


def checkpointer_releases(config: RunnableConfig) -> bool:
    """Whether the checkpointer that will save this step's writes releases the turn."""
    saver = (config.get("configurable") or {}).get(CONFIG_KEY_CHECKPOINTER)
    return bool(getattr(saver, "releases_queued_turns", False))
