"""`--graph module:attr` (or `path/to/file.py:attr`): the agent a command runs, and the
template's own graphs and workflow API for the commands that run them (`chat` by default,
`demo`, `approvals`).

The template is not installed with the engine: its modules (`graphs.agent`, …) are imported
from the working directory, as `langgraph dev` imports them, so a project of one's own with
its own `graphs/` is never shadowed by ours, and a command that needs ours outside a checkout
of the template says so in one line.

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

TEMPLATE_AGENT = "graphs.agent:make_graph"
PLAIN_AGENT = "recollect.cli.plain_agent:make_agent"
DEFAULT_GRAPH = "the template's graphs.agent:make_graph, else a plain create_agent with memory"


def default_agent() -> str:
    """The template's agent in a checkout of the template (a `graphs` package in the working
    directory); anywhere else, `create_agent` with `MemoryMiddleware`."""
    found = (Path.cwd() / "graphs" / "agent.py").is_file()
    return TEMPLATE_AGENT if found else PLAIN_AGENT


def load_agent(spec: str | None, *, checkpointer: Any, memory: Any) -> Any:
    """The runnable agent `spec` names (None: `default_agent()`), persisted by `checkpointer`,
    recalling from `memory`."""
    if spec is None:
        spec = default_agent()
        try:
            target = _attribute(spec)
        except RecollectError as exc:
            raise RecollectError(f"{exc} (pass --graph module:factory for your own)") from None
    else:
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


def template_attribute(spec: str) -> Any:
    """`module:attr` of the template (`graphs.approvals:Approvals`), from the working
    directory; outside a checkout of the template, one line that says where to run."""
    try:
        return _attribute(spec)
    except RecollectError as exc:
        raise RecollectError(
            f"{exc}: this command runs the template's own graphs; run it in a checkout of the "
            "template (the folder with langgraph.json and graphs/)"
        ) from None


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
