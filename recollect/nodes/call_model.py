"""Ask the model, with the budgeted prompt, and record what the prompt cost."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from langchain_core.tools import BaseTool
from langgraph.runtime import Runtime

from recollect.memory.models import chat_model
from recollect.nodes.context import context_of
from recollect.nodes.prompt import build_prompt
from recollect.state.agent import AgentState
from recollect.state.context import Context


class ModelNode(Protocol):
    """The step's signature, as LangGraph's `add_node` expects it."""

    def __call__(self, state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]: ...


def make_call_model(tools: Sequence[BaseTool] = ()) -> ModelNode:
    """A `call_model` step with `tools` bound (the graph decides which tools the agent has)."""

    def call_model(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
        """One model call; the tokens per category go into state for traces and the demo."""
        ctx = context_of(runtime)
        prompt = build_prompt(state, ctx)
        model = chat_model(ctx.model)
        runnable = model.bind_tools(list(tools)) if tools else model
        reply = runnable.invoke(prompt.messages)
        return {"messages": [reply], "context_tokens": prompt.tokens}

    return call_model


call_model = make_call_model()
"""The step without tools."""
