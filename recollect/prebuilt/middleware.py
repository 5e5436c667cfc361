"""Recollect's memory as LangChain agent middleware: one line in `create_agent(middleware=...)`.

Once a turn, before its first model call (`before_agent`), it recalls long-term memory and
trims the checkpointed history (pinning exact values first); every model call gets the
budgeted prompt (system prompt, profile, recalled memories, summary, pins, the recent tail)
in place of the raw message list; after the reply that ends the turn it folds what left the
window into the summary when one is due and queues the turn for background extraction. Its
state is `MemoryAgentState`, `create_agent`'s own state with `MemoryState` mixed in. Settings
are `recollect.Context`, or the subclass named as `context_schema` (give `create_agent` the
same): every hook and tool reads them as that class, its defaults filling in what a run does
not send.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import Any, cast

from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    ToolCallRequest,
)
from langchain_core.messages import AnyMessage, SystemMessage, ToolMessage
from langgraph.prebuilt import ToolRuntime
from langgraph.runtime import Runtime
from langgraph.types import Command

from recollect.longterm.process import process_memory
from recollect.models.factory import is_anthropic
from recollect.prebuilt.call_model import TurnPrompt, prompt_for_model
from recollect.prebuilt.check_input import check_new_messages
from recollect.prebuilt.finish_turn import afinish_turn, finish_turn
from recollect.prebuilt.prepare import PrepareNode
from recollect.prebuilt.prompt import PromptSection
from recollect.prebuilt.recall import MemorySource
from recollect.prebuilt.run_context import as_schema, context_of, settled
from recollect.state.agent_state import AgentState as MemoryAgentView
from recollect.state.context import Context
from recollect.state.memory_state import MemoryState


class MemoryAgentState(AgentState[Any], MemoryState, total=False):
    """`create_agent`'s state with the memory's fields."""


class MemoryMiddleware(AgentMiddleware[MemoryAgentState, Any]):
    """Recall, trim, the budgeted prompt, the summary fold and the extraction enqueue around
    `create_agent`'s model calls. `memory` is the long-term memory to recall from (default:
    the process's, opened on first use from `DATABASE_URI` or the embedded server; None:
    recall from the agent's `store`, if it has one); `prompt_sections` render fields of the
    agent's state or settings into the system message; `context_schema` is the settings class
    the agent was given (`create_agent(context_schema=...)`), which a hook cannot ask the
    agent for."""

    state_schema = MemoryAgentState

    def __init__(
        self,
        memory: MemorySource = process_memory,
        prompt_sections: Sequence[PromptSection] = (),
        *,
        context_schema: type[Context] = Context,
    ) -> None:
        super().__init__()
        self._prepare = PrepareNode(memory)
        self._sections = tuple(prompt_sections)
        self._schema = context_schema

    def before_agent(self, state: MemoryAgentState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Once a turn, before its first model call: check the input, recall and trim."""
        view = _view(state)
        check_new_messages(view)
        return self._prepare(view, settled(runtime, self._schema))

    async def abefore_agent(
        self, state: MemoryAgentState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        view = _view(state)
        check_new_messages(view)
        return await self._prepare.acall(view, settled(runtime, self._schema))

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ExtendedModelResponse[Any]:
        turn = _turn(request, self._sections, self._schema)
        response = handler(_budgeted(request, turn))
        return ExtendedModelResponse(response, Command(update=turn.update))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ExtendedModelResponse[Any]:
        turn = _turn(request, self._sections, self._schema)
        response = await handler(_budgeted(request, turn))
        return ExtendedModelResponse(response, Command(update=turn.update))

    def after_model(self, state: MemoryAgentState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        return finish_turn(_view(state), settled(runtime, self._schema)) or None

    async def aafter_model(
        self, state: MemoryAgentState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        return await afinish_turn(_view(state), settled(runtime, self._schema)) or None

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """Tools read the settings as the agent's class too (`ToolRuntime.context`)."""
        return handler(_settled_tool(request, self._schema))

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        return await handler(_settled_tool(request, self._schema))


def _settled_tool(request: ToolCallRequest, schema: type[Context]) -> ToolCallRequest:
    """The tool call, its runtime's context made a `schema` (outside a graph it has none)."""
    runtime: ToolRuntime[Any, Any] | None = request.runtime
    if not isinstance(runtime, ToolRuntime) or isinstance(runtime.context, schema):
        return request
    return replace(request, runtime=replace(runtime, context=as_schema(runtime.context, schema)))


def _view(state: MemoryAgentState) -> MemoryAgentView:
    """The memory nodes' view of the agent's state (the same fields, typed as theirs)."""
    return cast(MemoryAgentView, state)


def _turn(
    request: ModelRequest[Any], sections: Sequence[PromptSection], schema: type[Context]
) -> TurnPrompt:
    """The prompt for this call; `create_agent`'s `system_prompt`, when given, is the
    instructions the memory sections follow."""
    ctx = context_of(settled(request.runtime, schema))
    if request.system_message is not None:
        ctx = replace(ctx, system_prompt=request.system_message.text)
    state = _view(cast(MemoryAgentState, request.state))
    return prompt_for_model(state, ctx, sections, cache_marks=is_anthropic(request.model))


def _budgeted(request: ModelRequest[Any], turn: TurnPrompt) -> ModelRequest[Any]:
    """The request with the budgeted prompt: its system message and the history that fits."""
    system, *history = turn.messages
    return request.override(
        system_message=cast(SystemMessage, system), messages=cast(list[AnyMessage], history)
    )
