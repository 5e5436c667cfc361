"""The layout's rules, read from the code's own imports.

The template (`state/`, `nodes/`, `graphs/`) calls the engine (`recollect/`); the engine never
calls back, except its command line, which runs the graphs. Inside the engine, subsystems
import each other in one direction only, and no two modules import each other in a circle
(imports inside functions count: they are how circles hide). The template builds no SQL.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ("state", "nodes", "graphs")
ENGINE = "recollect"
SQL_START = re.compile(r"^\s*(SELECT|INSERT|UPDATE|DELETE|WITH|CREATE|ALTER|DROP|GRANT)\s", re.M)


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    tree: ast.Module

    @property
    def package(self) -> str:
        return self.name.split(".")[0]

    @property
    def subsystem(self) -> str | None:
        """`recollect.<subsystem>.…`; None for the engine's own top-level modules."""
        parts = self.name.split(".")
        return parts[1] if parts[0] == ENGINE and len(parts) > 2 else None


def modules(root: Path = ROOT) -> list[Module]:
    found = []
    for top in (ENGINE, *TEMPLATE):
        for path in sorted((root / top).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found.append(Module(".".join(parts), path, ast.parse(path.read_text(), str(path))))
    return found


def imported(module: Module) -> Iterator[str]:
    """Every module this one imports, at any depth of its code."""
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


def edges(found: list[Module]) -> dict[str, set[str]]:
    names = {m.name for m in found}
    graph: dict[str, set[str]] = {m.name: set() for m in found}
    for module in found:
        for target in imported(module):
            if target in names and target != module.name:
                graph[module.name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    result: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                result.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return result


def engine_importing_template(found: list[Module]) -> list[str]:
    return [
        f"{m.name} imports {target}"
        for m in found
        if m.package == ENGINE and m.subsystem != "cli"
        for target in imported(m)
        if target.split(".")[0] in TEMPLATE
    ]


def subsystem_graph(found: list[Module]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for m in found:
        if m.subsystem is None or m.subsystem == "cli":
            continue
        graph.setdefault(m.subsystem, set())
        for target in imported(m):
            parts = target.split(".")
            if parts[0] == ENGINE and len(parts) > 2 and parts[1] not in (m.subsystem, "cli"):
                graph[m.subsystem].add(parts[1])
    return graph


def sql_in_template(found: list[Module]) -> list[str]:
    """String constants that read as SQL, and `.execute(...)` calls, in state/nodes/graphs."""
    problems = []
    for m in found:
        if m.package not in TEMPLATE:
            continue
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(m.tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
        }
        for node in ast.walk(m.tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in docstrings
                and SQL_START.search(node.value)
            ):
                problems.append(f"{m.name}:{node.lineno} SQL text")
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("execute", "executemany")
            ):
                problems.append(f"{m.name}:{node.lineno} .{node.func.attr}()")
    return problems


@pytest.fixture(scope="module")
def found() -> list[Module]:
    return modules()


def test_the_template_sits_at_the_top_and_the_engine_beside_it() -> None:
    for name in (*TEMPLATE, "tests", "langgraph.json", "pyproject.toml", ".env.example"):
        assert (ROOT / name).exists(), name
    assert (ROOT / "README.md").is_file()
    assert (ROOT / ENGINE / "__init__.py").is_file()


def test_the_engine_never_imports_the_template(found: list[Module]) -> None:
    assert engine_importing_template(found) == []


def test_subsystems_import_each_other_in_one_direction(found: list[Module]) -> None:
    graph = subsystem_graph(found)
    assert {"store", "history", "longterm", "extraction", "privacy", "approvals"} <= set(graph)
    assert cycles(graph) == []
    assert graph["store"] == set(), "the store is the ground floor"


def test_no_two_modules_import_each_other_in_a_circle(found: list[Module]) -> None:
    assert cycles(edges(found)) == []


def test_the_template_builds_no_sql(found: list[Module]) -> None:
    assert sql_in_template(found) == []


def test_each_rule_can_fail(tmp_path: Path) -> None:
    """The checks above, fed a tree that breaks each rule once."""
    files = {
        "recollect/__init__.py": "",
        "recollect/store/__init__.py": "",
        "recollect/store/a.py": "from recollect.longterm import b\n",
        "recollect/longterm/__init__.py": "",
        "recollect/longterm/b.py": "def f():\n    from recollect.store import a\n",
        "recollect/longterm/c.py": "import state.agent\n",
        "state/__init__.py": "",
        "state/agent.py": "",
        "nodes/__init__.py": "",
        "nodes/n.py": 'def n(conn):\n    conn.execute("SELECT 1")\n',
        "graphs/__init__.py": "",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    broken = modules(tmp_path)
    assert engine_importing_template(broken) == ["recollect.longterm.c imports state.agent"]
    assert cycles(subsystem_graph(broken)) == [["longterm", "store"]]
    assert cycles(edges(broken)) == [["recollect.longterm.b", "recollect.store.a"]]
    assert sorted(sql_in_template(broken)) == ["nodes.n:2 .execute()", "nodes.n:2 SQL text"]
