"""What an image built from this folder leaves out, and what `langgraph dev` reads at start."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

LEFT_OUT = [
    ".venv/lib/python3.11/site-packages/langgraph/__init__.py",
    ".recollect/pgdata/base/1/1259",
    ".recollect/keep-running",
    ".langgraph_api/.langgraph_checkpoint.1.pckl",
    ".env",
    ".env.local",
    "bench/out/growth.json",
    "nodes/__pycache__/recall.cpython-311.pyc",
    ".mypy_cache/3.11/cache.db",
    ".git/HEAD",
]
"""Local environments, users' memories, secrets, generated output."""
KEPT = [
    "pyproject.toml",
    "langgraph.json",
    "README.md",
    ".env.example",
    "graphs/agent.py",
    "recollect/store/server.py",
    "bench/growth.py",
]


def _pattern(line: str) -> re.Pattern[str]:
    """Docker's matching: `**` spans folders, `*` and `?` stay within one, and a pattern that
    names a folder leaves out everything under it."""
    out = ""
    i = 0
    while i < len(line):
        if line.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
        elif line.startswith("**", i):
            out += ".*"
            i += 2
        elif line[i] == "*":
            out += "[^/]*"
            i += 1
        elif line[i] == "?":
            out += "[^/]"
            i += 1
        else:
            out += re.escape(line[i])
            i += 1
    return re.compile(f"^{out}(?:/.*)?$")


def left_out(path: str, lines: list[str]) -> bool:
    """Whether Docker leaves `path` out of the build context (the last matching line wins)."""
    excluded = False
    for raw in lines:
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        pattern = line[1:] if negated else line
        if _pattern(pattern.strip("/")).match(path):
            excluded = not negated
    return excluded


@pytest.fixture(scope="module")
def dockerignore() -> list[str]:
    return (ROOT / ".dockerignore").read_text().splitlines()


@pytest.mark.parametrize("path", LEFT_OUT)
def test_the_image_leaves_out(path: str, dockerignore: list[str]) -> None:
    assert left_out(path, dockerignore)


@pytest.mark.parametrize("path", KEPT)
def test_the_image_keeps(path: str, dockerignore: list[str]) -> None:
    assert not left_out(path, dockerignore)


def test_the_matcher_can_tell_a_miss() -> None:
    assert not left_out(".venv/bin/python", ["venv", ".venv/lib", "bin"])
    assert left_out("a/b/__pycache__/x.pyc", ["**/__pycache__"])
    assert not left_out("a/__pycache__/x.pyc", ["__pycache__"])
    assert not left_out(".env.example", [".env.*", "!.env.example"])


def test_langgraph_dev_loads_the_projects_env_file() -> None:
    config = json.loads((ROOT / "langgraph.json").read_text())
    assert config["env"] == ".env"


def test_every_graph_has_a_description_an_image_can_carry() -> None:
    """`langgraph build` writes the graphs into a single-quoted `ENV` line of the Dockerfile."""
    graphs = json.loads((ROOT / "langgraph.json").read_text())["graphs"]
    for name, spec in graphs.items():
        assert spec["description"].strip(), name
        assert "'" not in json.dumps(spec), name
