"""A step with both forms: `invoke` (the CLI, scripts) runs the sync one, `ainvoke` and the
served API await the async one; both wrap the same plain logic.

`offloaded_twin` is the async form of a step whose work is the synchronous engine's (short
SQL transactions): it runs on the engine's bounded executor instead of the server's shared
default one. Steps that wait on a model are not offloaded this way (a slow model would hold
one of the few threads recall needs); they keep LangGraph's default or get a real async form.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from recollect.langgraph_private import dual_step
from recollect.store.offload import offloaded


def twin(name: str, sync: Callable[..., Any], asynchronous: Callable[..., Any]) -> Any:
    """One step, two forms. LangGraph reads the step's parameters (`runtime`, `config`) from
    `sync`, so `asynchronous` must accept the same ones."""
    return dual_step(sync, asynchronous, name=name, trace=False)


def offloaded_twin(name: str, sync: Callable[..., Any]) -> Any:
    """`sync` as the step, and on an event loop `sync` on the bounded executor."""

    async def on_executor(state: Any, **kwargs: Any) -> Any:
        return await offloaded(sync, state, **kwargs)

    return twin(name, sync, on_executor)
