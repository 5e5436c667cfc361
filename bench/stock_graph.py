"""The load benchmark's peer: stock LangGraph, one `MessagesState` node calling the same model.

Registered only in the temporary `langgraph.json` that `bench.load` writes; it keeps the whole
history and has no memory, so its cost per turn is the server's plus one model call.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import START, MessagesState, StateGraph

from recollect.models.factory import chat_model


def call_model(state: MessagesState) -> dict[str, Any]:
    """Send the whole thread to the model the environment configures."""
    return {"messages": [chat_model().invoke(state["messages"])]}


builder = StateGraph(MessagesState)
builder.add_node("call_model", call_model)
builder.add_edge(START, "call_model")
graph = builder.compile(name="stock-agent")
