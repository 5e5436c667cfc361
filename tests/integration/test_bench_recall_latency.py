"""`bench.recall_latency` end to end on a tiny corpus: every measured user gets its k results and
the dense stage's overlap with the exact scan is reported."""

from __future__ import annotations

import json
from pathlib import Path

from bench.recall_latency import main


def test_a_tiny_run_measures_every_user_and_the_overlap(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    args = ["--facts", "1300", "--users", "5", "--large-user-facts", "500"]
    args += ["--huge-user-facts", "600", "--queries", "22", "--k", "5", "--skip-ann"]
    args += ["--stock-index", "flat", "--stock-put-sample", "20"]
    assert main([*args, "--data-dir", str(tmp_path / "db"), "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    ours = report["systems"]["recollect"]
    assert [ours[f"mean_results_{size}"] for size in ("small", "large", "huge")] == [5, 5, 5]
    overlap = report["dense_overlap_with_exact"]
    assert overlap["small"] == 1.0  # fewer facts than the prefilter keeps: exact
    assert 0.0 < overlap["huge"] <= 1.0
