"""Recollect's memory as `create_react_agent`'s `pre_model_hook` and `post_model_hook`.

The pre-model hook recalls and trims once a turn (before its first model call) and hands the
model the budgeted prompt as `llm_input_messages`, so the checkpointed messages stay the
trimmed history; the post-model hook folds and queues the turn after the reply that ends it.
Give the agent `ReactMemoryState` (or a subclass with fields of your own) as its `state_schema`
and `Context` (or the subclass given to `MemoryHooks` as `context_schema`; its defaults fill in
what a run does not send) as its `context_schema`, and no `prompt`: the instructions are
`Context.system_prompt`, followed by the memory sections.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Annotated, Any, cast

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from langgraph.managed import RemainingSteps
from langgraph.runtime import Runtime

from recollect.langgraph_private import dual_step
from recollect.longterm.process import process_memory
from recollect.models.factory import is_anthropic
from recollect.prebuilt.call_model import prompt_for_model
from recollect.prebuilt.check_input import check_new_messages, turn_starts
from recollect.prebuilt.finish_turn import afinish_turn, finish_turn
from recollect.prebuilt.prepare import PrepareNode
from recollect.prebuilt.prompt import PromptSection
from recollect.prebuilt.recall import MemorySource
from recollect.prebuilt.run_context import context_of, settled
from recollect.state.agent_state import AgentState
from recollect.state.context import Context
from recollect.state.memory_state import MemoryState, merge_pinned


class ReactMemoryState(MemoryState, total=False):
    """`create_react_agent`'s state (messages, remaining steps) with the memory's fields."""

    messages: Annotated[list[AnyMessage], add_messages]
    remaining_steps: RemainingSteps


class MemoryHooks:
    """`pre_model_hook` and `post_model_hook` bound to `memory` (default: the process's
    long-term memory, opened on first use; None: recall from the agent's `store`), with
    `prompt_sections` rendering fields of the agent's state or settings into the prompt;
    `context_schema` is the settings class the agent was given, which a hook cannot ask the
    agent for."""

    def __init__(
        self,
        memory: MemorySource = process_memory,
        prompt_sections: Sequence[PromptSection] = (),
        *,
        context_schema: type[Context] = Context,
    ) -> None:
        self._prepare = PrepareNode(memory)
        self._sections = tuple(prompt_sections)
        self._schema = context_schema
        self.pre_model_hook: Any = dual_step(
            self._before, self._abefore, name="pre_model_hook", trace=False
        )
        self.post_model_hook: Any = dual_step(
            self._after, self._aafter, name="post_model_hook", trace=False
        )

    def _before(self, state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
        runtime = settled(runtime, self._schema)
        update = {}
        if turn_starts(state):
            check_new_messages(state)
            update = self._prepare(state, runtime)
        return _with_prompt(state, update, runtime, self._sections)

    async def _abefore(self, state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
        runtime = settled(runtime, self._schema)
        update = {}
        if turn_starts(state):
            check_new_messages(state)
            update = await self._prepare.acall(state, runtime)
        return _with_prompt(state, update, runtime, self._sections)

    def _after(self, state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
        return finish_turn(state, settled(runtime, self._schema))

    async def _aafter(self, state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
        return await afinish_turn(state, settled(runtime, self._schema))


def _with_prompt(
    state: AgentState,
    update: dict[str, Any],
    runtime: Runtime[Context],
    sections: Sequence[PromptSection],
) -> dict[str, Any]:
    """`update`, the prompt's own update, and the prompt itself as `llm_input_messages`."""
    ctx = context_of(runtime)
    marks = is_anthropic(ctx.model)  # the hook sees the run's model name, not the agent's model
    turn = prompt_for_model(applied(state, update), ctx, sections, cache_marks=marks)
    combined = {**update, **turn.update}
    if "pinned" in update and "pinned" in turn.update:
        combined["pinned"] = {**update["pinned"], **turn.update["pinned"]}
    if "unpinned" in update and "unpinned" in turn.update:
        combined["unpinned"] = update["unpinned"] + turn.update["unpinned"]
    return {**combined, "llm_input_messages": turn.messages}


def applied(state: AgentState, update: dict[str, Any]) -> AgentState:
    """The state after `update`, as the graph's reducers will make it (so the prompt is built
    from the trimmed history in the same step that trims it)."""
    view: dict[str, Any] = dict(state)
    for key, value in update.items():
        if key == "messages":
            view[key] = add_messages(cast(list[Any], state.get("messages", [])), value)
        elif key == "pinned":
            view[key] = merge_pinned(state.get("pinned"), value)
        elif key == "unpinned":
            view[key] = operator.add(state.get("unpinned", 0), value)
        else:
            view[key] = value
    return cast(AgentState, view)
