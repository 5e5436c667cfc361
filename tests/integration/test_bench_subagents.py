"""The sub-agents benchmark runs end to end on a LoCoMo-shaped conversation (the figures come
from bench/ on the real data)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import subagents

TOPICS = ("pottery", "marathon training", "adopting a dog", "a trip to Kyoto", "a new job")


def locomo_like(path: Path, turns: int = 300) -> None:
    """One conversation: `turns` long turns over two sessions, an observation per turn, and
    eight questions whose evidence is a turn."""
    sessions: dict[str, object] = {}
    observations: dict[str, dict[str, list[list[str]]]] = {}
    for s in (1, 2):
        rows = []
        facts = []
        for n in range(turns // 2):
            topic = TOPICS[n % len(TOPICS)]
            dia = f"D{s}:{n}"
            speaker = ("Ana", "Ben")[n % 2]
            text = f"About {topic}: " + f"detail {n} of session {s} " * 12
            rows.append({"speaker": speaker, "dia_id": dia, "text": text})
            facts.append([f"{speaker} talked about {topic} (item {n})", dia])
        sessions[f"session_{s}"] = rows
        sessions[f"session_{s}_date_time"] = f"1:56 pm on {s} May, 2023"
        observations[f"session_{s}_observation"] = {"Ana": facts}
    qa = [
        {"question": f"What did Ana say about {TOPICS[n % 5]} ({n})?", "answer": "x",
         "evidence": [f"D1:{n}"], "category": 4}
        for n in range(16)
    ]  # fmt: skip
    sample = {"conversation": sessions, "observation": observations, "qa": qa}
    path.write_text(json.dumps([sample]))


def test_a_round_of_eight_workers_reports_both_sides(
    postgres_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DATABASE_URI", postgres_server)
    data, out = tmp_path / "locomo.json", tmp_path / "subagents.json"
    locomo_like(data)
    args = ["--data", str(data), "--conversation", "0", "--embeddings", "none"]
    assert subagents.main([*args, "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["workers"] == 8
    assert result["history_tokens"] > 15_000
    assert result["naive_tokens_per_round"] >= 8 * result["history_tokens"]
    assert result["recollect_tokens_per_round"] <= 0.1 * result["naive_tokens_per_round"]
    assert max(result["recollect_tokens_per_worker"]) <= 1500 + 300
    assert 0 < result["orchestrator_context_tokens"] <= 4000


def test_a_missing_conversation_is_a_clear_error(tmp_path: Path) -> None:
    data = tmp_path / "locomo.json"
    locomo_like(data, turns=4)
    with pytest.raises(SystemExit):
        subagents.main(["--data", str(data), "--conversation", "5", "--json", "x.json"])
