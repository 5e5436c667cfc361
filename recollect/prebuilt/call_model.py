"""Ask the model, with the budgeted prompt, and record what the prompt cost."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, Protocol

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langgraph.runtime import Runtime

from recollect.history.pinning import eviction_note, pin_change, unscanned
from recollect.models.factory import chat_model, is_anthropic
from recollect.prebuilt.prompt import PromptSection, build_prompt, with_breakpoints
from recollect.prebuilt.run_context import context_of
from recollect.prebuilt.trace import note_prompt
from recollect.state.agent_state import AgentState
from recollect.state.context import Context
from recollect.state.memory_state import merge_pinned


class ModelNode(Protocol):
    """The step's signature, as LangGraph's `add_node` expects it."""

    def __call__(self, state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]: ...


class AsyncModelNode(Protocol):
    """The async step's signature."""

    async def __call__(self, state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]: ...


class _Bound:
    """The model with the step's tools bound, kept while the model stays the same: binding
    converts every tool's schema, a cost paid once per model instead of once per turn."""

    def __init__(self, tools: Sequence[BaseTool]) -> None:
        self._tools = list(tools)
        self._last: tuple[BaseChatModel, Runnable[Any, Any]] | None = None

    def __call__(self, model: BaseChatModel) -> Runnable[Any, Any]:
        if not self._tools:
            return model
        last = self._last
        if last is None or last[0] is not model:
            last = self._last = (model, model.bind_tools(self._tools))
        return last[1]


class TurnPrompt(NamedTuple):
    """The messages for one model call, and the state update that goes with its reply."""

    messages: list[BaseMessage]
    update: dict[str, Any]
    """The prompt's tokens per category, and pins from tool results since the last human
    message (with the note to the fold when the cap unpinned older ones)."""


def prompt_for_model(
    state: AgentState,
    ctx: Context,
    own_sections: Sequence[PromptSection] = (),
    *,
    cache_marks: bool = False,
) -> TurnPrompt:
    """The budgeted prompt for the next model call, and the state update beside its reply.

    Tool results since the last human message (a tool loop) have not passed through trim yet,
    so their exact values are pinned here, before the prompt's tool-results share can cut
    them. Every host of the memory (this graph, `MemoryMiddleware`, `MemoryHooks`) builds its
    model call with this; `cache_marks` (an Anthropic model) marks the prompt's cache
    breakpoints.
    """
    messages = state.get("messages", [])
    last_human = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=0)
    fresh = unscanned(messages[last_human:], state.get("pinned_through"))
    pins = pin_change(state.get("pinned"), fresh)
    view: AgentState = {**state, "pinned": merge_pinned(state.get("pinned"), pins.update)}
    prompt = build_prompt(view, ctx, own_sections=own_sections)
    note_prompt(view, prompt)
    update: dict[str, Any] = {"context_tokens": prompt.tokens}
    if pins.update:
        update["pinned"] = pins.update
    if prompt.recalled_shown != (state.get("recalled_shown") or {}):
        update["recalled_shown"] = prompt.recalled_shown
    if fresh and fresh[-1].id:
        update["pinned_through"] = fresh[-1].id
    note = eviction_note(pins.evicted, fresh[-1].id if fresh else None)
    if note is not None:
        update["unpinned"] = len(pins.evicted)
        update["unfolded"] = [*state.get("unfolded", []), note]
    sent = with_breakpoints(prompt.messages) if cache_marks else list(prompt.messages)
    return TurnPrompt(sent, update)


def _turn(
    state: AgentState,
    runtime: Runtime[Context],
    bound: _Bound,
    own_sections: Sequence[PromptSection],
) -> tuple[Runnable[Any, Any], list[Any], Callable[[Any], dict[str, Any]]]:
    """The model call's plain logic, shared by the sync and async steps: the bound model, the
    prompt, and what turns the reply into the state update."""
    ctx = context_of(runtime)
    model = chat_model(ctx.model)
    turn = prompt_for_model(state, ctx, own_sections, cache_marks=is_anthropic(model))

    def finish(reply: Any) -> dict[str, Any]:
        return {"messages": [reply], **turn.update}

    return bound(model), turn.messages, finish


def make_call_model(
    tools: Sequence[BaseTool] = (), own_sections: Sequence[PromptSection] = ()
) -> ModelNode:
    """A `call_model` step with `tools` bound (the graph decides which tools the agent has)
    and the graph's own prompt sections."""

    bound = _Bound(tools)

    def call_model(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
        """One model call; the tokens per category go into state for traces and the demo."""
        runnable, prompt, finish = _turn(state, runtime, bound, own_sections)
        return finish(runnable.invoke(prompt))

    return call_model


def make_acall_model(
    tools: Sequence[BaseTool] = (), own_sections: Sequence[PromptSection] = ()
) -> AsyncModelNode:
    """The async twin of `make_call_model`, for the served API: the model is awaited
    (`ainvoke`), so a slow model holds no thread while it thinks."""

    bound = _Bound(tools)

    async def call_model(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
        runnable, prompt, finish = _turn(state, runtime, bound, own_sections)
        return finish(await runnable.ainvoke(prompt))

    return call_model


call_model = make_call_model()
"""The step without tools."""
