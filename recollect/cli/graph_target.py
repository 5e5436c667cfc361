"""`--graph module:attr` (or `path/to/file.py:attr`): the agent a command runs, when it is a
fork's own rather than `graphs.agent`.

`attr` may be a factory called as `attr(checkpointer=..., memory=...)` (`graphs.agent.make_graph`,
or a `make_agent` from `docs/drop-in.md`) or a `StateGraph` builder, compiled here with the
command's checkpointer. A compiled graph without a checkpointer cannot keep a thread, so it is
refused with a line that says what to export instead.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

from langgraph.graph import StateGraph
from langgraph.pregel import Pregel

from recollect.store.errors import RecollectError

DEFAULT_GRAPH = "graphs.agent:make_graph"


def load_agent(spec: str, *, checkpointer: Any, memory: Any) -> Any:
    """The runnable agent `spec` names, persisted by `checkpointer`, recalling from `memory`."""
    target = _attribute(spec)
    if isinstance(target, StateGraph):
        return target.compile(checkpointer=checkpointer)
    if isinstance(target, Pregel):
        raise RecollectError(
            f"--graph {spec} is a compiled graph; name its builder (a StateGraph) or a "
            "factory taking checkpointer= and memory= instead, so the thread can be kept"
        )
    if callable(target):
        return target(checkpointer=checkpointer, memory=memory)
    raise RecollectError(f"--graph {spec} is a {type(target).__name__}, not a graph or factory")


def _attribute(spec: str) -> Any:
    where, _, name = spec.rpartition(":")
    if not where or not name:
        raise RecollectError(f"--graph takes module:attribute or file.py:attribute, got {spec!r}")
    module = _module(where, spec)
    try:
        return getattr(module, name)
    except AttributeError:
        raise RecollectError(f"--graph {spec}: {where} has no {name!r}") from None


def _module(where: str, spec: str) -> Any:
    """A module by dotted name (the working directory first on the path) or by file."""
    try:
        if where.endswith(".py"):
            path = Path(where).resolve()
            loader = importlib.util.spec_from_file_location(path.stem, path)
            if loader is None or loader.loader is None or not path.is_file():
                raise FileNotFoundError(path)
            module = importlib.util.module_from_spec(loader)
            loader.loader.exec_module(module)
            return module
        if os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        return importlib.import_module(where)
    except (ImportError, FileNotFoundError) as exc:
        raise RecollectError(f"--graph {spec}: cannot load {where} ({exc})") from exc
