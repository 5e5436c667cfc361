"""`recollect`'s public surface: every name it lists loads from its home, the type checker
sees the same names, and importing the package loads none of the engine until a name is used
(the command line and a served process import only what they run)."""

from __future__ import annotations

import ast
import subprocess
import sys
from importlib import import_module
from pathlib import Path

import recollect

INIT = Path(recollect.__file__)


def _typed_names() -> set[str]:
    """The names the `TYPE_CHECKING` block imports, which is what mypy checks callers by."""
    tree = ast.parse(INIT.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom):
                    found |= {alias.asname or alias.name for alias in stmt.names}
    return found


def test_every_public_name_loads_from_its_home() -> None:
    homes = recollect._HOME_OF
    assert set(homes) == set(recollect.__all__)
    for name in recollect.__all__:
        assert getattr(recollect, name) is getattr(import_module(homes[name]), name), name


def test_the_type_checker_sees_the_same_names() -> None:
    assert _typed_names() == set(recollect.__all__)


def test_an_unknown_name_is_an_attribute_error() -> None:
    assert not hasattr(recollect, "no_such_name")


def test_importing_the_package_loads_nothing_else() -> None:
    probe = (
        "import recollect, sys; print(sorted(m for m in sys.modules if m.startswith('recollect.')))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
