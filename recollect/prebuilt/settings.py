"""Every step of a graph reads the run's settings as the graph's own `Context` class.

LangGraph makes a dict a caller sends into the graph's `context_schema`, but hands a step
`None` when the caller sent nothing (Studio, a script) and a `Context` of another class as it
came (the CLI sends the template's). A fork's graph, built with `context_schema=MyContext`,
would then see a plain `Context` without its own fields. `with_settings` wraps a step so that
its runtime, and every tool it calls, carries a `MyContext` (the defaults fill in), and
`route_with_settings` does the same for a routing function.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar, cast

from langchain_core.runnables import Runnable, RunnableConfig
from langgraph.runtime import Runtime

from recollect.langgraph_private import CONFIG_KEY_RUNTIME, dual_step
from recollect.prebuilt.run_context import settled
from recollect.state.context import Context

Routed = TypeVar("Routed")


def with_settings(
    step: Runnable[Any, Any] | Callable[..., Any], schema: type[Context], name: str = ""
) -> Any:
    """`step`, run with the run's settings made a `schema`: the same step, sync and async (a
    plain function keeps LangGraph's way of running it under `ainvoke`, on a thread)."""
    runnable: Runnable[Any, Any] = (
        step
        if isinstance(step, Runnable)
        else dual_step(step, None, name=name or getattr(step, "__name__", "step"), trace=False)
    )

    def config_for(config: RunnableConfig) -> RunnableConfig:
        configurable = config.get("configurable") or {}
        runtime: Runtime[Any] | None = configurable.get(CONFIG_KEY_RUNTIME)
        if runtime is None or isinstance(runtime.context, schema):
            return config
        own = {**configurable, CONFIG_KEY_RUNTIME: settled(runtime, schema)}
        return cast(RunnableConfig, {**config, "configurable": own})

    def run(state: Any, config: RunnableConfig) -> Any:
        return runnable.invoke(state, config_for(config))

    async def arun(state: Any, config: RunnableConfig) -> Any:
        return await runnable.ainvoke(state, config_for(config))

    return dual_step(run, arun, name=name or runnable.get_name(), trace=False)


def route_with_settings(
    route: Callable[[Any, Runtime[Any]], Routed], schema: type[Context]
) -> Callable[[Any, Runtime[Any]], Routed]:
    """`route` (a conditional edge's function), reading the settings as a `schema`."""

    @wraps(route)
    def routed(state: Any, runtime: Runtime[Any]) -> Routed:
        return route(state, settled(runtime, schema))

    return routed
