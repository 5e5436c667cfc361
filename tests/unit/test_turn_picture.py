"""The turn pictures in the README and the architecture notes are the compiled agent graph's own
Mermaid (`graph.get_graph().draw_mermaid()`), line for line, so they cannot drift from it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from graphs.agent import graph

ROOT = Path(__file__).resolve().parents[2]
MERMAID = re.compile(r"```mermaid\n(.*?)```", re.DOTALL)


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.strip().splitlines()]


@pytest.mark.parametrize("page", ["README.md", "docs/architecture.md"])
def test_the_turn_picture_is_the_compiled_graphs(page: str) -> None:
    drawn = _lines(graph.get_graph().draw_mermaid())
    pictures = [_lines(block) for block in MERMAID.findall((ROOT / page).read_text())]
    assert drawn in pictures, f"{page}: paste `graphs.agent.graph.get_graph().draw_mermaid()`"
