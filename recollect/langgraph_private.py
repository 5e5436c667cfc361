"""Every name this project takes from LangGraph that LangGraph does not publish, in one place.

LangGraph can change its private modules in any release within the `<2` range we accept, so
nothing else imports them: when an upgrade breaks one, this module (and the test that checks
each name against the installed versions) is the only place to look. Each entry says what the
public API lacks that it gives us.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from functools import partial, wraps
from typing import Any

from langchain_core.runnables.config import run_in_executor
from langgraph._internal._constants import CONFIG_KEY_CHECKPOINTER as _CONFIG_KEY_CHECKPOINTER
from langgraph._internal._constants import CONFIG_KEY_RUNTIME as _CONFIG_KEY_RUNTIME
from langgraph._internal._runnable import RunnableCallable
from langgraph.checkpoint.postgres import _ainternal, _internal
from langgraph.checkpoint.postgres.base import (
    _aexecute,
    _execute,
    _keep_latest,
    _refuse_delta_threads,
)

CHECKED_WITH = {
    "langgraph": "1.2.24",
    "langgraph-checkpoint-postgres": "3.2.0",
    "langgraph-api": "0.16.7",
}
"""The releases these names were last read against (the test names them when one fails)."""

CONFIG_KEY_RUNTIME: str = _CONFIG_KEY_RUNTIME
"""Where a run's `Runtime` (and so its `Context`) sits in the config a checkpointer receives;
`get_runtime()` answers only inside a step, and a checkpointer call is not one."""

CONFIG_KEY_CHECKPOINTER: str = _CONFIG_KEY_CHECKPOINTER
"""Where a step's config holds the checkpointer that will save its writes: the `extract` step
asks it whether it releases a turn's queued messages when it commits the turn."""

sync_connection = _internal.get_connection
"""A connection from a saver's connection, pool or pipeline: the saver subclasses override
`_cursor` and need the same choice their parent makes."""
async_connection = _ainternal.get_connection
"""The async form of `sync_connection`."""
execute = _execute
"""Run one of the saver's statement objects on a cursor (the parent's own way)."""
aexecute = _aexecute
"""The async form of `execute`."""
keep_latest = _keep_latest
"""The saver's prune statement for one thread (keep the newest checkpoint)."""
refuse_delta_threads = _refuse_delta_threads
"""The saver's check that refuses to prune threads written with delta channels."""


def dual_step(
    sync: Callable[..., Any],
    asynchronous: Callable[..., Awaitable[Any]] | None,
    *,
    name: str,
    trace: bool,
) -> Any:
    """One runnable with a sync and an async body that LangGraph calls as a step (or a child
    run): it reads the step's parameters (`runtime`, `config`) from `sync`'s signature. The
    public `add_node` takes one function and runs a sync one in a thread under `ainvoke`, as
    this step does when `asynchronous` is None (never on the event loop, where a served run
    would stall every other)."""
    if asynchronous is None:
        asynchronous = wraps(sync)(partial(run_in_executor, None, sync))
    return RunnableCallable(sync, asynchronous, name=name, trace=trace)


def served_request_user() -> Any:
    """The user of the request `langgraph dev` or the Platform is handling, when running inside
    the server (whose package is loaded then; importing it elsewhere would demand the server's
    settings). The run's config carries the user too, but calls outside a run (reading a
    thread's state, the store's endpoints) have only this."""
    server = sys.modules.get("langgraph_api.utils")
    get_auth_ctx = getattr(server, "get_auth_ctx", None)
    if get_auth_ctx is None:
        return None
    ctx = get_auth_ctx()
    return ctx.user if ctx is not None else None
