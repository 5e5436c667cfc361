"""Recollect: memory for LangGraph agents, bounded, durable and private, in one Postgres.

Everything an agent of your own needs is importable from here:

- `MemoryMiddleware` for `langchain.agents.create_agent`;
- `MemoryHooks` (with `ReactMemoryState`) for `create_react_agent`;
- `MemoryState` to mix into a `StateGraph`'s state, and the prebuilt nodes (`RecallNode`,
  `trim`, `make_call_model`, `summarize`, `extract`, `PrepareNode`);
- `Context`, the run settings (whose memory, which model, the token budgets);
- `open_memory()`, which opens the memory engine, LangGraph's checkpointer and a store on
  `DATABASE_URI` or the embedded Postgres.

Names load on first use, so importing one part of the engine does not import them all.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from recollect.longterm.facts import LongTermMemory
    from recollect.longterm.process import process_memory
    from recollect.models.factory import chat_model
    from recollect.prebuilt.call_model import make_acall_model, make_call_model
    from recollect.prebuilt.check_input import check_new_messages
    from recollect.prebuilt.extract import aextract, extract
    from recollect.prebuilt.hooks import MemoryHooks, ReactMemoryState
    from recollect.prebuilt.middleware import MemoryAgentState, MemoryMiddleware
    from recollect.prebuilt.opened import OpenedMemory, open_memory
    from recollect.prebuilt.prepare import PrepareNode
    from recollect.prebuilt.prompt import PromptSection
    from recollect.prebuilt.recall import MemorySource, RecallNode
    from recollect.prebuilt.run_context import context_of
    from recollect.prebuilt.settings import route_with_settings, with_settings
    from recollect.prebuilt.summarize import asummarize, fold_pending, summarize
    from recollect.prebuilt.trim import atrim, trim
    from recollect.prebuilt.twin import offloaded_twin, twin
    from recollect.state.agent_state import AgentInput, AgentState, thread_config, user_turn
    from recollect.state.context import Context
    from recollect.state.memory_state import MemoryState, RecalledItem
    from recollect.store.errors import RecollectError

_HOMES = {
    "recollect.longterm.facts": ("LongTermMemory",),
    "recollect.longterm.process": ("process_memory",),
    "recollect.models.factory": ("chat_model",),
    "recollect.prebuilt.call_model": ("make_acall_model", "make_call_model"),
    "recollect.prebuilt.check_input": ("check_new_messages",),
    "recollect.prebuilt.extract": ("aextract", "extract"),
    "recollect.prebuilt.hooks": ("MemoryHooks", "ReactMemoryState"),
    "recollect.prebuilt.middleware": ("MemoryAgentState", "MemoryMiddleware"),
    "recollect.prebuilt.opened": ("OpenedMemory", "open_memory"),
    "recollect.prebuilt.prepare": ("PrepareNode",),
    "recollect.prebuilt.prompt": ("PromptSection",),
    "recollect.prebuilt.recall": ("MemorySource", "RecallNode"),
    "recollect.prebuilt.run_context": ("context_of",),
    "recollect.prebuilt.settings": ("route_with_settings", "with_settings"),
    "recollect.prebuilt.summarize": ("asummarize", "fold_pending", "summarize"),
    "recollect.prebuilt.trim": ("atrim", "trim"),
    "recollect.prebuilt.twin": ("offloaded_twin", "twin"),
    "recollect.state.agent_state": ("AgentInput", "AgentState", "thread_config", "user_turn"),
    "recollect.state.context": ("Context",),
    "recollect.state.memory_state": ("MemoryState", "RecalledItem"),
    "recollect.store.errors": ("RecollectError",),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = [
    "AgentInput",
    "AgentState",
    "Context",
    "LongTermMemory",
    "MemoryAgentState",
    "MemoryHooks",
    "MemoryMiddleware",
    "MemorySource",
    "MemoryState",
    "OpenedMemory",
    "PrepareNode",
    "PromptSection",
    "ReactMemoryState",
    "RecallNode",
    "RecalledItem",
    "RecollectError",
    "aextract",
    "asummarize",
    "atrim",
    "chat_model",
    "check_new_messages",
    "context_of",
    "extract",
    "fold_pending",
    "make_acall_model",
    "make_call_model",
    "offloaded_twin",
    "open_memory",
    "process_memory",
    "route_with_settings",
    "summarize",
    "thread_config",
    "trim",
    "twin",
    "user_turn",
    "with_settings",
]


def __getattr__(name: str) -> Any:
    """Load a public name from its module the first time it is asked for."""
    home = _HOME_OF.get(name)
    if home is None:
        raise AttributeError(f"module 'recollect' has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
