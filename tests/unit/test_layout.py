"""The layout's rules. Imports are `lint-imports`' (the contracts in `pyproject.toml`, run by
`make lint`); what is left here is what an import contract cannot say: the template sits at
the top with the engine beside it, builds no SQL, and the contracts fail when a rule is broken.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ("state", "nodes", "graphs")
ENGINE = "recollect"
SQL_START = re.compile(r"^\s*(SELECT|INSERT|UPDATE|DELETE|WITH|CREATE|ALTER|DROP|GRANT)\s", re.M)
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    tree: ast.Module

    @property
    def package(self) -> str:
        return self.name.split(".")[0]


def modules(root: Path = ROOT) -> list[Module]:
    found = []
    for top in (ENGINE, *TEMPLATE):
        for path in sorted((root / top).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found.append(Module(".".join(parts), path, ast.parse(path.read_text(), str(path))))
    return found


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


def test_the_template_builds_no_sql(found: list[Module]) -> None:
    assert sql_in_template(found) == []


def test_the_template_builds_no_sql_when_it_does(tmp_path: Path) -> None:
    (tmp_path / "nodes").mkdir()
    (tmp_path / "nodes" / "n.py").write_text('def n(conn):\n    conn.execute("SELECT 1")\n')
    broken = modules(tmp_path)
    assert sorted(sql_in_template(broken)) == ["nodes.n:2 .execute()", "nodes.n:2 SQL text"]


def _lint_imports(tree: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(tree / "pyproject.toml"), "--no-cache"],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def copied_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The engine, the template and the contracts, copied where they can be broken."""
    tree = tmp_path_factory.mktemp("layout")
    for top in (ENGINE, *TEMPLATE):
        shutil.copytree(ROOT / top, tree / top, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tree / "pyproject.toml")
    return tree


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        ("graphs/agent.py", "from recollect.store.pool import shared_pool", "public surface"),
        ("recollect/longterm/plans.py", "import graphs.agent", "never imports the template"),
        ("state/agent.py", "import nodes.memory_job", "graphs over nodes over state"),
        ("recollect/store/clock.py", "import recollect.longterm.facts", "ground floor"),
        ("recollect/trace/writer.py", "import recollect.prebuilt.trace", "No circles"),
    ],
)
def test_each_contract_fails_when_its_rule_is_broken(
    copied_tree: Path, module: str, line: str, contract: str
) -> None:
    path = copied_tree / module
    kept = path.read_text()
    path.write_text(f"{kept}\n{line}\n")
    try:
        result = _lint_imports(copied_tree)
    finally:
        path.write_text(kept)
    assert result.returncode == 1, result.stdout[-2000:]
    broken = [row for row in result.stdout.splitlines() if row.endswith(" BROKEN")]
    assert any(contract in row for row in broken), broken


def test_the_copied_tree_keeps_every_contract(copied_tree: Path) -> None:
    result = _lint_imports(copied_tree)
    assert result.returncode == 0, result.stdout[-2000:]
