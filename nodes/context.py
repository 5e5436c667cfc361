"""The run's `Context`, whether the caller passed one, a dict, or nothing."""

from __future__ import annotations

from typing import Any, Protocol

from langgraph.runtime import Runtime

from state.context import Context


class HasContext(Protocol):
    """A graph step's or a tool's runtime: both carry the run's context."""

    @property
    def context(self) -> Context | dict[str, Any] | None: ...


def context_of(runtime: Runtime[Context] | HasContext) -> Context:
    """Environment defaults fill in when a caller (e.g. Studio) sends no context."""
    ctx = runtime.context
    if ctx is None:
        return Context()
    if isinstance(ctx, dict):
        return Context(**ctx)
    return ctx
