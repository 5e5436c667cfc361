"""`.env.example` lists every variable the code reads, and nothing it does not."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APP_FOLDERS = ("recollect", "state", "nodes", "graphs")
VARIABLE = re.compile(
    r"^(RECOLLECT_[A-Z0-9_]+|OPENAI_[A-Z0-9_]+|LANGSMITH_[A-Z0-9_]+|DATABASE_URI|POSTGRES_URI)$"
)
LISTED = re.compile(r"^#?\s*([A-Z][A-Z0-9_]*)=", re.MULTILINE)
_READERS = {"get", "getenv"}  # setdefault writes (HF_HUB_OFFLINE for a library)


def _modules() -> list[tuple[Path, ast.Module]]:
    return [
        (path, ast.parse(path.read_text(encoding="utf-8")))
        for folder in APP_FOLDERS
        for path in sorted((ROOT / folder).rglob("*.py"))
    ]


def named_in_source() -> set[str]:
    """Every string constant in the app that is a variable name of ours (read directly, kept
    in a constant, or passed to a reading helper)."""
    return {
        node.value
        for _, module in _modules()
        for node in ast.walk(module)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and VARIABLE.match(node.value)
    }


def _is_environ(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "environ"


def direct_reads() -> list[tuple[str, str]]:
    """(where, first argument) of every `os.environ.get/[...]`, `os.getenv` in the app."""
    reads = []
    for path, module in _modules():
        for node in ast.walk(module):
            argument: ast.AST | None = None
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                target = node.func
                if target.attr in _READERS and (
                    _is_environ(target.value) or target.attr == "getenv"
                ):
                    argument = node.args[0] if node.args else None
            elif isinstance(node, ast.Subscript) and _is_environ(node.value):
                argument = node.slice
            if argument is not None:
                where = f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}"
                reads.append((where, ast.unparse(argument)))
    return reads


def listed_in_example() -> set[str]:
    return set(LISTED.findall((ROOT / ".env.example").read_text(encoding="utf-8")))


def test_every_variable_the_code_reads_is_in_env_example() -> None:
    missing = named_in_source() - listed_in_example()
    assert not missing, f".env.example misses {sorted(missing)}"


def test_env_example_lists_only_variables_the_code_reads() -> None:
    stale = listed_in_example() - named_in_source()
    assert not stale, f".env.example lists variables nothing reads: {sorted(stale)}"


def test_every_direct_read_names_a_variable_the_scan_sees() -> None:
    """A read through a name the scan cannot see (a computed string) would escape the check
    above; reads go through a literal, a constant holding one, or a helper's parameter."""
    literal = re.compile(r"^['\"](.*)['\"]$")
    reads = direct_reads()
    assert len(reads) >= 10, "the scan found the app's reads"
    for where, argument in reads:
        match = literal.match(argument)
        if match:
            assert VARIABLE.match(match.group(1)), f"{where}: unexpected variable {argument}"
        else:
            assert re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", argument), (
                f"{where}: a computed variable name ({argument}) escapes the .env.example check"
            )
