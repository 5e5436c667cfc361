"""A newcomer's first run, on a fresh data folder: `recollect demo`, then `recollect chat` at a
terminal. The chat screen holds the conversation and, between turns, one short `memory:` line;
a job another setup queued for a model this chat does not have is left alone."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from recollect.models.factory import DEFAULT_OPENAI_MODEL
from tests.support.processes import recollect_command
from tests.support.scripted_openai import ScriptedOpenAI
from tests.support.terminal import Terminal

QUIET_S = 3.0
"""Longer than the worker's poll and an offline extraction: its whole job, unseen."""
NOISE = re.compile(r"Traceback|Error|failed|attempt \d|memory job \d|Warning", re.IGNORECASE)


@pytest.fixture
def fresh_data() -> Iterator[Path]:
    """A data folder nobody has used, where the embedded server's own user may work (pytest's
    `tmp_path` sits under a root-only folder)."""
    folder = Path(tempfile.mkdtemp(prefix="recollect-first-run-"))
    yield folder / "data"
    shutil.rmtree(folder, ignore_errors=True)


def _run(env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        recollect_command(*args),
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def test_demo_then_chat_shows_no_background_noise(
    fresh_data: Path, scripted_llm: ScriptedOpenAI
) -> None:
    data = fresh_data
    offline = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    offline.update(
        RECOLLECT_DATA_DIR=str(data),
        RECOLLECT_WORKER_POLL_S="0.2",
        RECOLLECT_EXTRACT_EVERY_TURNS="1",
    )
    demo = _run(offline, "demo")
    assert demo.returncode == 0, demo.stderr
    assert not NOISE.search(demo.stderr), demo.stderr
    assert f"data: embedded Postgres in {data}" in demo.stdout  # where it went, what next
    hint = "recollect chat --user you   (/history, /jobs, /end, /exit; background details in"
    assert f"{hint} {data / 'recollect.log'})" in demo.stdout

    elsewhere = {
        **offline,
        "OPENAI_BASE_URL": scripted_llm.base_url,
        "OPENAI_API_KEY": "test-key",
    }
    queued = _run(
        elsewhere, "chat", "--user", "ana", "--thread", "ana-elsewhere", "--no-worker",
        stdin="I prefer green tea\n",
    )  # fmt: skip
    assert queued.returncode == 0, queued.stderr

    chat = Terminal("chat", "--user", "ana", env=offline, cwd=str(data.parent))
    chat.wait_for("you> ")
    assert chat.quiet_for(QUIET_S) == ""
    chat.type("I prefer oolong tea")
    chat.wait_for("assistant>")
    chat.wait_for("you> ")
    assert chat.quiet_for(QUIET_S) == "", "nothing prints over the prompt"
    chat.type("I live in Lisbon")
    between = chat.wait_for("you> ")
    status = [line for line in between.splitlines() if line.startswith("memory:")]
    assert len(status) == 1, between
    assert re.fullmatch(r"memory: \d+ facts? stored(, \d+ for review)?", status[0]), status
    assert chat.quiet_for(QUIET_S) == ""
    chat.type("/jobs")
    jobs = chat.wait_for("you> ")
    assert f"thread ana-elsewhere model {DEFAULT_OPENAI_MODEL}: pending after 0 attempt" in jobs
    chat.type("/exit")
    assert chat.close() == 0

    assert not NOISE.search(chat.screen), chat.screen
    log = data / "recollect.log"
    assert f"background details in {log}" in chat.screen
    assert "memory job" in log.read_text(encoding="utf-8")
    counts = _run(offline, "memory", "jobs")
    assert "1 pending" in counts.stdout, counts.stdout
