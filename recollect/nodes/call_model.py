"""Ask the model, with the budgeted prompt, and record what the prompt cost."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from recollect.memory.models import chat_model
from recollect.nodes.context import context_of
from recollect.nodes.prompt import build_prompt
from recollect.state.agent import AgentState
from recollect.state.context import Context


def call_model(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
    """One model call; the tokens per category go into state for traces and the demo."""
    ctx = context_of(runtime)
    prompt = build_prompt(state, ctx)
    reply = chat_model(ctx.model).invoke(prompt.messages)
    return {"messages": [reply], "context_tokens": prompt.tokens}
