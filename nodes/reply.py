"""The agent's model step: `call_model`, and when its reply ends the turn, the extraction
enqueue in the same step.

A plain turn (no tool call to run, no fold due) used to spend a whole step on `extract`,
whose only work is one short transaction: one more checkpoint, one more write batch and one
more pass of the graph loop on the served event loop. Here the enqueue runs right after the
reply, as a child run named `extract`, so traces still show it. A turn that runs tools queues
in its last model step; a turn that folds still ends in the `extract` step (the graph routes
on `ends_turn`, the same test as here).

The enqueue is idempotent (the queue skips message ids it has seen and counts only new user
messages), so a turn sent again after its enqueue schedules nothing twice; an enqueue that
fails leaves the reply standing and the next turn queues the same messages again. One order
changed: the reply is queued just before its checkpoint is written, not after, so a run that
fails in between leaves that reply buffered for extraction though the thread never kept it
(the user's message is buffered and counted once either way).
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, cast

from langchain_core.messages import AIMessage, AnyMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.runtime import Runtime

from nodes.call_model import make_acall_model, make_call_model
from nodes.extract import aextract, extract
from nodes.prompt import PromptSection
from nodes.summarize import fold_pending
from recollect.langgraph_private import dual_step
from state.agent import AgentState
from state.context import Context

QUEUE_RUN = "extract"
"""The child run's name: what a trace of the turn calls the enqueue, wherever it runs."""

ReplyStep = Callable[[AgentState, Runtime[Context], RunnableConfig], dict[str, Any]]
AsyncReplyStep = Callable[[AgentState, Runtime[Context], RunnableConfig], Awaitable[dict[str, Any]]]

_queue = dual_step(extract, aextract, name=QUEUE_RUN, trace=True)


def ends_turn(state: AgentState, runtime: Runtime[Context]) -> bool:
    """The model's reply is the turn's last step: no tool call to run, no fold due."""
    messages = state.get("messages", [])
    if messages and isinstance(messages[-1], AIMessage) and messages[-1].tool_calls:
        return False
    return not fold_pending(state, runtime)


def after_reply(state: AgentState, update: dict[str, Any]) -> AgentState:
    """The state the next step would see, for the channels the enqueue and the turn's trace
    read: the model's step only appends its reply. The reply gets its id here (the messages
    reducer would give it one later), so the queue and the checkpoint name it alike."""
    replies: list[AnyMessage] = list(update.get("messages", []))
    for reply in replies:
        if reply.id is None:
            reply.id = str(uuid.uuid4())
    return {
        **state,
        "messages": [*state.get("messages", []), *replies],
        "unfolded": update.get("unfolded", state.get("unfolded", [])),
    }


def _child_config(config: RunnableConfig) -> RunnableConfig:
    """The step's config for its child run, without the step's own run name and id."""
    return cast(
        RunnableConfig, {k: v for k, v in config.items() if k not in ("run_name", "run_id")}
    )


def make_reply(
    tools: Sequence[BaseTool] = (), own_sections: Sequence[PromptSection] = ()
) -> ReplyStep:
    """`make_call_model`'s step, queueing the turn for extraction when the reply ends it."""
    model_step = make_call_model(tools, own_sections)

    def call_model(
        state: AgentState, runtime: Runtime[Context], config: RunnableConfig
    ) -> dict[str, Any]:
        update = model_step(state, runtime)
        after = after_reply(state, update)
        if ends_turn(after, runtime):
            update = {**update, **_queue.invoke(after, _child_config(config))}
        return update

    return call_model


def make_areply(
    tools: Sequence[BaseTool] = (), own_sections: Sequence[PromptSection] = ()
) -> AsyncReplyStep:
    """The async twin of `make_reply`."""
    model_step = make_acall_model(tools, own_sections)

    async def call_model(
        state: AgentState, runtime: Runtime[Context], config: RunnableConfig
    ) -> dict[str, Any]:
        update = await model_step(state, runtime)
        after = after_reply(state, update)
        if ends_turn(after, runtime):
            update = {**update, **await _queue.ainvoke(after, _child_config(config))}
        return update

    return call_model
