"""A bounded executor for the engine's blocking work when the caller is an event loop.

On the served API nodes run on the server's event loop; the embedder (CPU), the reranker (CPU)
and the engine's pooled SQL would block it. They run here instead: a fixed number of threads
(`RECOLLECT_OFFLOAD_THREADS`, default the CPU count), so a burst of users queues for CPU
instead of piling threads onto two cores, and the server's own default executor stays free.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

OFFLOAD_THREADS_ENV = "RECOLLECT_OFFLOAD_THREADS"
P = ParamSpec("P")
T = TypeVar("T")

_lock = threading.Lock()
_executor: list[ThreadPoolExecutor] = []


def offload_threads() -> int:
    """`RECOLLECT_OFFLOAD_THREADS`, a whole number ≥ 1; the CPU count when unset."""
    raw = os.environ.get(OFFLOAD_THREADS_ENV, "")
    try:
        value = int(raw) if raw else (os.cpu_count() or 2)
    except ValueError as exc:
        raise ValueError(f"{OFFLOAD_THREADS_ENV} must be a whole number, got {raw!r}") from exc
    if value < 1:
        raise ValueError(f"{OFFLOAD_THREADS_ENV} must be at least 1, got {value}")
    return value


def _shared() -> ThreadPoolExecutor:
    with _lock:
        if not _executor:
            _executor.append(
                ThreadPoolExecutor(offload_threads(), thread_name_prefix="recollect-offload")
            )
        return _executor[0]


async def offloaded(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """`fn(*args, **kwargs)` on the bounded executor, with the caller's context variables
    (the run's config and the authenticated identity travel in them)."""
    context = contextvars.copy_context()
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_shared(), lambda: context.run(fn, *args, **kwargs))


_warm: set[str] = set()
"""The functions that have run once on the executor: their lazy loads (models, tokenizers,
files) are done, so a light call of theirs no longer blocks the loop."""


async def offloaded_unless_light(
    light: bool, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs
) -> T:
    """`offloaded`, except that a call its caller knows to be light (microseconds of Python)
    runs on the loop, saving the executor hop, once `fn` has run on the executor before."""
    name = _name_of(fn)
    if light and name in _warm:
        return fn(*args, **kwargs)
    result = await offloaded(fn, *args, **kwargs)
    _warm.add(name)
    return result


def _name_of(fn: Callable[..., object]) -> str:
    inner = getattr(fn, "func", fn)  # a functools.partial names its function
    return f"{getattr(inner, '__module__', '')}.{getattr(inner, '__qualname__', repr(inner))}"
