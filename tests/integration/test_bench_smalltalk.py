"""`bench.smalltalk` end to end on a few messages of each split, over the built-in persona."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.smalltalk import main


def test_the_bench_runs_and_small_talk_injects_nothing(
    postgres_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECOLLECT_DATABASE_URI", postgres_server)
    monkeypatch.setenv("RECOLLECT_EMBEDDINGS", "offline")
    out = tmp_path / "out.json"
    assert main(["--json", str(out), "--sample", "2"]) == 0
    report: dict[str, Any] = json.loads(out.read_text())
    assert report["messages"] == 8
    for path in ("engine", "store"):
        rows = report["recall"][path]
        assert rows["phatic_injected"]["all"]["share"] == 0.0, rows["phatic_that_injected"]
        assert rows["content_recalled"]["all"]["share"] > 0.0
    off = report["recall"]["store_detector_off"]["phatic_injected"]["all"]["share"]
    assert off == 1.0, "without the detector a store-backed recall lists every fact"
