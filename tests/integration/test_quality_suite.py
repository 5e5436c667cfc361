"""The quality suite end to end against the scripted model server: every part runs through
the real OpenAI client and Postgres and reports scores and tokens (a smoke test; the scores
mean something only with a real model, which the suite refuses to fake)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from psycopg_pool import ConnectionPool

from bench import quality
from tests.support.extraction import is_extraction, one_fact_per_user_line
from tests.support.scripted_openai import JsonDict, Reply, ScriptedOpenAI

LOCOMO_SHAPED = {
    "conversation": {
        "speaker_a": "Ana",
        "speaker_b": "Bo",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [],
        "session_2_date_time": "2:10 pm on 20 May, 2023",
        "session_2": [],
    },
    "observation": {
        "session_1_observation": {"Ana": [["Ana adopted a dog called Biscuit.", "D1:1"]]},
        "session_2_observation": {"Bo": [["Bo started rowing lessons in Ghent.", "D2:4"]]},
    },
    "qa": [
        {"question": "What is Ana's dog called?", "answer": "Biscuit", "evidence": ["D1:1"],
         "category": 4},
        {"question": "Where does Bo row?", "answer": "Ghent", "evidence": ["D2:4"], "category": 4},
        {"question": "No evidence here", "answer": "x", "evidence": [], "category": 4},
    ],
}  # fmt: skip


def _responder(request: JsonDict) -> Reply:
    """Extraction: one fact per user line; the judge: CORRECT when the gold answer's words are
    in the response; answers: the first remembered line, or a shrug without memory."""
    if is_extraction(request):
        reply: Reply = one_fact_per_user_line()(request)
        return reply
    system = str(request["messages"][0]["content"])
    last = str(request["messages"][-1]["content"])
    if system.startswith(quality.JUDGE[:20]):
        gold = re.search(r"Gold answer: (.*)\n", last)
        response = last.split("Response: ", 1)[-1].lower()
        correct = bool(gold) and gold.group(1).lower() in response  # type: ignore[union-attr]
        return Reply(text="CORRECT" if correct else "WRONG")
    if "## Memory\n" in system:
        return Reply(text=system.split("## Memory\n", 1)[1].splitlines()[0])
    return Reply(text="I do not know.")


def test_every_part_runs_and_reports_scores_and_tokens(
    pool: ConnectionPool[Any], scripted_llm: ScriptedOpenAI, tmp_path: Path
) -> None:
    scripted_llm.set_default(_responder)
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps([LOCOMO_SHAPED]))
    report = quality.run(pool, locomo_path=data, updates_limit=3, extraction_limit=None)
    quality.print_report(report)
    extraction = report["extraction"]
    assert extraction["turns"] >= 50
    assert extraction["durable"] >= 20
    assert extraction["tokens"] > 0
    assert 0 <= extraction["precision"] <= 1
    assert 0 < extraction["recall"] <= 1
    for part, questions in (("knowledge_updates", 3), ("locomo_qa", 2)):
        row = report[part]
        assert row["questions"] == questions
        assert row["no_memory"]["score"] == 0.0, "a shrug is never judged correct"
        assert row["memory"]["tokens"] > row["no_memory"]["tokens"], "memory was recalled"
        assert row["memory"]["score"] > 0
        assert row["full_context"]["tokens"] >= row["memory"]["tokens"]
    fidelity = report["summary_fidelity"]
    assert fidelity["planted"] == 10
    assert fidelity["memory"]["tokens"] > 0
    assert fidelity["full_context"]["tokens"] > 0


def test_labelled_turns_cover_every_class_in_several_languages() -> None:
    turns = quality.load_labelled()
    by_label = {label: [t for t in turns if t.label == label] for label in
                ("durable", "session", "injection")}  # fmt: skip
    assert len(turns) >= 50
    assert all(len(group) >= 12 for group in by_label.values())
    assert all(t.expect for t in by_label["durable"])
    assert len({t.id for t in turns}) == len(turns)
    non_ascii = [t for t in turns if not t.text.isascii()]
    assert len(non_ascii) >= 5, "other languages are part of the class"


def test_without_a_model_it_says_so_and_skips(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "RECOLLECT_MODEL"):
        monkeypatch.delenv(name, raising=False)
    assert quality.main(["--json", str(tmp_path / "q.json")]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out == [quality.SKIP]
    assert not (tmp_path / "q.json").exists()
