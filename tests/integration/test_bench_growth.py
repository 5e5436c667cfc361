"""The growth benchmark still runs end to end (a few turns; the figures come from bench/)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import growth
from recollect.models import factory as models


def test_a_short_replay_reports_every_system(
    database_uri: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in (
        "OPENAI_BASE_URL",
        "OPENAI_API_KEY",
        "RECOLLECT_MODEL",
        "RECOLLECT_MODEL_MAX_RETRIES",
    ):
        monkeypatch.setenv(key, "placeholder")  # restored after the test
    out = tmp_path / "growth.json"
    try:
        args = ["--turns", "12", "--history-tokens", "600", "--database-uri", database_uri]
        growth.main([*args, "--json", str(out)])
    finally:
        models._cached_model.cache_clear()
    result = json.loads(out.read_text())
    assert set(result["systems"]) == {
        "naive",
        "langmem",
        "recollect",
        "middleware",
        "summarization",
    }
    ours = result["systems"]["recollect"]
    assert ours["turns_completed"] == 12
    assert ours["planted_values_in_prompt_at_end"] == 5
    assert ours["checkpoint_bytes"] > 0
    assert result["systems"]["naive"]["prompt_tokens_last"] > 0
    assert "prompt_tokens_total" in result["ratios_recollect_vs_naive"]
    dropped_in = result["systems"]["middleware"]
    assert dropped_in["error"] is None
    assert dropped_in["turns_completed"] == 12
    assert dropped_in["planted_values_in_prompt_at_end"] == 5
    assert dropped_in["latest_user_message_in_prompt_at_end"]
    assert result["systems"]["summarization"]["error"] is None
    assert result["systems"]["summarization"]["turns_completed"] == 12
    assert result["systems"]["summarization"]["summary_calls"] > 0, "its summary never ran"
    assert dropped_in["summary_calls"] > 0
