"""LangGraph's private names stay behind one module, and each still does what we take it for on
the installed releases (`CHECKED_WITH` names the ones they were read against)."""

from __future__ import annotations

import ast
import asyncio
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import Checkpoint, CheckpointMetadata
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from recollect import langgraph_private
from recollect.langgraph_private import (
    CHECKED_WITH,
    CONFIG_KEY_RUNTIME,
    dual_step,
    served_request_user,
)

ROOT = Path(__file__).resolve().parents[2]
ADAPTER = ROOT / "recollect" / "langgraph_private.py"
SCANNED = ("recollect", "state", "nodes", "graphs", "bench")
LANGGRAPH_PACKAGES = ("langgraph", "langgraph_api", "langgraph_runtime", "langgraph_sdk")


def _installed() -> str:
    return ", ".join(
        f"{name} {version(name)} (checked {seen})" for name, seen in CHECKED_WITH.items()
    )


def private_langgraph_imports(path: Path, root: Path = ROOT) -> Iterator[str]:
    """Imports of a LangGraph module or name that starts with an underscore, and lookups of
    the server's modules by name (how a private module is reached without importing it)."""
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names = [node.value] if node.value.startswith("langgraph_api.") else []
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] in LANGGRAPH_PACKAGES and (
                any(part.startswith("_") for part in parts[1:]) or parts[0] == "langgraph_api"
            ):
                yield f"{path.relative_to(root)}:{node.lineno} {name}"
                break


def test_only_the_adapter_touches_private_langgraph_names() -> None:
    found = [
        hit
        for top in SCANNED
        for path in sorted((ROOT / top).rglob("*.py"))
        if path != ADAPTER
        for hit in private_langgraph_imports(path)
    ]
    assert found == []
    assert list(private_langgraph_imports(ADAPTER)), "the scan must see the adapter's own"


def test_the_scan_sees_a_private_import(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from langgraph._internal._runnable import RunnableCallable\n"
        "import langgraph.checkpoint.postgres._internal\n"
        "from langgraph.checkpoint.postgres.base import _execute\n"
        "server = 'langgraph_api.utils'\n"
        "from langgraph.graph import StateGraph\n"
    )
    hits = list(private_langgraph_imports(sample, tmp_path))
    assert [hit.split()[0] for hit in hits] == [
        "sample.py:1",
        "sample.py:2",
        "sample.py:3",
        "sample.py:4",
    ]


def test_every_checked_release_is_installed() -> None:
    for name in CHECKED_WITH:
        assert version(name), name


class Counter(TypedDict, total=False):
    ran: str
    seen_user: str


class Who(TypedDict):
    user_id: str


def _sync(state: Counter, runtime: Runtime[Who]) -> Counter:
    return {"ran": "sync", "seen_user": runtime.context["user_id"]}


async def _async(state: Counter, runtime: Runtime[Who]) -> Counter:
    return {"ran": "async", "seen_user": runtime.context["user_id"]}


def _one_step_graph(checkpointer: Any = None) -> Any:
    builder = StateGraph(Counter, context_schema=Who)
    builder.add_node("step", dual_step(_sync, _async, name="step", trace=False))
    builder.add_edge(START, "step")
    return builder.compile(checkpointer=checkpointer)


def test_a_dual_step_runs_its_sync_body_under_invoke_and_its_async_body_under_ainvoke() -> None:
    graph = _one_step_graph()
    context: Who = {"user_id": "ana"}
    assert graph.invoke({}, context=context) == {"ran": "sync", "seen_user": "ana"}, _installed()
    assert asyncio.run(graph.ainvoke({}, context=context)) == {
        "ran": "async",
        "seen_user": "ana",
    }, _installed()


class ConfigSeeingSaver(InMemorySaver):
    """Keeps the config of every checkpoint write, as our Postgres saver reads it."""

    def __init__(self) -> None:
        super().__init__()
        self.configs: list[RunnableConfig] = []

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: Any,
    ) -> RunnableConfig:
        self.configs.append(config)
        return super().put(config, checkpoint, metadata, new_versions)


def test_a_checkpoint_write_sees_the_runs_context_under_the_runtime_key() -> None:
    saver = ConfigSeeingSaver()
    graph = _one_step_graph(saver)
    graph.invoke({}, {"configurable": {"thread_id": "t"}}, context={"user_id": "ana"})
    contexts = [
        getattr((c.get("configurable") or {}).get(CONFIG_KEY_RUNTIME), "context", None)
        for c in saver.configs
    ]
    assert contexts, "no checkpoint was written"
    assert all(c == {"user_id": "ana"} for c in contexts), _installed()


def test_outside_the_server_there_is_no_request_user() -> None:
    assert served_request_user() is None


@pytest.mark.parametrize(
    "name",
    [
        "sync_connection",
        "async_connection",
        "execute",
        "aexecute",
        "keep_latest",
        "refuse_delta_threads",
    ],
)
def test_the_savers_private_helpers_are_still_callables(name: str) -> None:
    """What they do is exercised against Postgres by the checkpointer's integration tests."""
    assert callable(getattr(langgraph_private, name)), _installed()
