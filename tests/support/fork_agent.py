"""A fork's own agent for `recollect chat --graph`: LangChain's `create_agent` with the memory
as middleware, on the configured model (the offline one in tests)."""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent

from recollect.models.factory import chat_model
from recollect.prebuilt.middleware import MemoryMiddleware
from recollect.state.context import Context


def make_agent(memory: Any, checkpointer: Any) -> Any:
    return create_agent(
        chat_model(),
        tools=[],
        middleware=[MemoryMiddleware(memory)],
        context_schema=Context,
        checkpointer=checkpointer,
        name="fork-agent",
    )
