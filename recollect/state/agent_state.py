"""A conversation agent's state: its messages and the memory's fields, checkpointed after every
step, with an explicit reducer per field (the memory's own fields are `MemoryState`, which any
graph's state can mix in)."""

from __future__ import annotations

from typing import Annotated

from langchain_core.messages import AnyMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from recollect.state.memory_state import MemoryState


class AgentState(MemoryState, total=False):
    """Everything one conversation thread carries between turns: its messages and the
    memory's fields (`MemoryState`)."""

    messages: Annotated[list[AnyMessage], add_messages]


class AgentInput(TypedDict):
    """What a caller sends: new messages only."""

    messages: Annotated[list[AnyMessage], add_messages]


def thread_config(thread_id: str) -> RunnableConfig:
    """The config that addresses one conversation thread."""
    return {"configurable": {"thread_id": thread_id}}


def user_turn(text: str) -> AgentInput:
    """The input for one user message."""
    messages: list[AnyMessage] = [HumanMessage(content=text)]
    return {"messages": messages}
