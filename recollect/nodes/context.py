"""The run's `Context`, whether the caller passed one, a dict, or nothing."""

from __future__ import annotations

from langgraph.runtime import Runtime

from recollect.state.context import Context


def context_of(runtime: Runtime[Context]) -> Context:
    """Environment defaults fill in when a caller (e.g. Studio) sends no context."""
    ctx = runtime.context
    if ctx is None:
        return Context()
    if isinstance(ctx, dict):
        return Context(**ctx)
    return ctx
