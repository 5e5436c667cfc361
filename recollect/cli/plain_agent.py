"""The agent `recollect chat` talks to outside a checkout of the template: LangChain's
`create_agent` on the configured model with `MemoryMiddleware`, and no tools."""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langgraph.checkpoint.base import BaseCheckpointSaver

from recollect.longterm.facts import LongTermMemory
from recollect.models.factory import chat_model
from recollect.prebuilt.middleware import MemoryMiddleware
from recollect.state.context import Context


def make_agent(checkpointer: BaseCheckpointSaver[Any], memory: LongTermMemory) -> Any:
    """A conversation with memory, kept by `checkpointer`."""
    return create_agent(
        chat_model(),
        tools=[],
        middleware=[MemoryMiddleware(memory)],
        context_schema=Context,
        checkpointer=checkpointer,
        name="recollect-chat",
    )
