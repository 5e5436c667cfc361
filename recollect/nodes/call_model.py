"""Ask the model, with the budgeted prompt, and record what the prompt cost."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from recollect.memory.models import chat_model
from recollect.memory.pinning import new_pins
from recollect.nodes.context import context_of
from recollect.nodes.prompt import build_prompt
from recollect.state.agent import AgentState, merge_pinned
from recollect.state.context import Context


def call_model(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
    """One model call; the tokens per category go into state for traces and the demo.

    Tool results that arrived since the last human message (a tool loop) have not passed
    through trim yet, so their exact values are pinned here, before the prompt's
    tool-results share can cut them.
    """
    ctx = context_of(runtime)
    messages = state.get("messages", [])
    last_human = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=0)
    pins = new_pins(state.get("pinned"), messages[last_human:])
    view: AgentState = {**state, "pinned": merge_pinned(state.get("pinned"), pins)}
    prompt = build_prompt(view, ctx)
    reply = chat_model(ctx.model).invoke(prompt.messages)
    update: dict[str, Any] = {"messages": [reply], "context_tokens": prompt.tokens}
    if pins:
        update["pinned"] = pins
    return update
