"""`bench.updates` end to end on a few sequences: offline (the rule) and with a chat model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.updates import Case, DataError, load, main, parse_line
from tests.support.scripted_openai import JsonDict, Reply, ScriptedOpenAI, echo_responder

DATA = Path(__file__).resolve().parents[1] / "data" / "updates.jsonl"
PICK = ("change-001", "coexist-", "retraction-", "list-", "as_of-", "multilingual_change-")


def _few(tmp_path: Path) -> Path:
    """The first sequence of several kinds, from the shipped set."""
    lines = DATA.read_text(encoding="utf-8").splitlines()
    chosen = [next(line for line in lines if f'"id": "{prefix}' in line) for prefix in PICK]
    path = tmp_path / "few.jsonl"
    path.write_text("\n".join(chosen) + "\n", encoding="utf-8")
    return path


def _run(tmp_path: Path, data: Path, *extra: str) -> dict[str, Any]:
    out = tmp_path / "out.json"
    assert main(["--data", str(data), "--json", str(out), *extra]) == 0
    report: dict[str, Any] = json.loads(out.read_text())
    return report


def test_the_shipped_set_is_valid_and_large_enough() -> None:
    sequences = load(DATA)
    assert len(sequences) >= 100
    kinds = {"change", "coexist", "retraction", "list", "as_of", "correction", "plan",
             "distractor", "numeric"}  # fmt: skip
    assert {s.kind for s in sequences} >= kinds
    held_out = [s for s in sequences if s.split == "held_out"]
    assert len({s.lang for s in held_out}) >= 6
    assert {s.split for s in sequences} == {"tune", "held_out"}


def test_offline_recollect_keeps_current_facts_and_drops_stale_ones(
    postgres_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECOLLECT_DATABASE_URI", postgres_server)
    report = _run(tmp_path, _few(tmp_path), "--judge", "configured,oracle")
    ours, stock = report["systems"]["recollect"], report["systems"]["stock"]
    assert ours["judge"] == "rule"
    oracle = report["systems"]["recollect:oracle"]
    assert oracle["judge"] == "OracleJudge"
    assert oracle["stale_leak_at_5"] == 0.0, oracle["misses"]
    assert ours["candidate_recall"] == 1.0, "every stale fact was judged or ended by the rule"
    assert set(ours["by_lang"]) == {"en", "de"}
    assert ours["current_hit_at_5"] == 1.0, ours["misses"]
    assert ours["stale_leak_at_5"] == 0.0, ours["misses"]
    assert ours["as_of_hit_at_5"] == 1.0
    assert stock["stale_leak_at_5"] > ours["stale_leak_at_5"], "stock keeps every statement"
    assert set(ours["by_kind"]) == {"change", "coexist", "retraction", "list", "as_of",
                                    "multilingual_change"}  # fmt: skip


def _label_judge(sequences: list[Case]) -> Any:
    """Answers the judge's question as the set's labels do: the old statement ended when it is
    stale and the new one is the sequence's latest word in time, wherever it stands in the list
    (or, for `as_of`, the later version)."""
    ended: set[tuple[str, str]] = set()
    for seq in sequences:
        if seq.as_of is not None:
            ended |= {(old, new) for old in seq.current for new in seq.stale}
        elif seq.stale:
            latest = min(seq.statements, key=lambda s: s.days_ago).text
            ended |= {(old, latest) for old in seq.stale}

    def respond(request: JsonDict) -> Reply:
        text = json.dumps(request.get("messages"), ensure_ascii=False)
        if "Old:" not in text:
            return echo_responder(request)
        prompt = request["messages"][-1]["content"]
        old = prompt.split("Old: ", 1)[1].split("\n", 1)[0]
        new = prompt.split("New: ", 1)[1].split("\n", 1)[0]
        return Reply(json=json.dumps({"contradicts": (old, new) in ended}))

    return respond


def test_with_a_chat_model_the_judge_is_asked_and_scores_hold(
    postgres_server: str,
    tmp_path: Path,
    scripted_llm: ScriptedOpenAI,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RECOLLECT_DATABASE_URI", postgres_server)
    data = _few(tmp_path)
    scripted_llm.set_default(_label_judge(load(data)))
    report = _run(tmp_path, data)
    ours = report["systems"]["recollect"]
    assert ours["judge"] == "ModelJudge"
    assert ours["current_hit_at_5"] == 1.0, ours["misses"]
    assert ours["stale_leak_at_5"] == 0.0, ours["misses"]


def test_a_bad_line_is_refused_with_its_place(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"x\.jsonl:1: missing query"):
        parse_line('{"id": 1, "statements": [], "current": [], "stale": []}', "x.jsonl:1")
    with pytest.raises(DataError, match="not one of the statements"):
        parse_line(
            '{"id": 1, "statements": [{"text": "a", "category": "goal"}], "query": "q",'
            ' "current": ["b"], "stale": []}',
            "x.jsonl:2",
        )
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1}\n')
    with pytest.raises(SystemExit):
        main(["--data", str(bad), "--json", str(tmp_path / "o.json")])
    assert not (tmp_path / "o.json").exists()
