"""The `recollect` command driven as a subprocess, against the test run's Postgres."""

from __future__ import annotations

from recollect.memory.models import OFFLINE_MODEL
from tests.support.processes import Interactive, run_recollect


def test_chat_survives_kill_9_between_turns(database_uri: str) -> None:
    env = {"DATABASE_URI": database_uri}
    first = Interactive("chat", "--user", "ana", "--thread", "ana-crash", env=env)
    assert "offline" in first.expect("model:")
    first.expect("thread: ana-crash (0 messages")
    first.send("my ticket is 8842-B")
    first.expect("assistant>")
    first.send("and my email is ana@example.com")
    first.expect("assistant>")
    first.kill()

    second = Interactive("chat", "--user", "ana", "--thread", "ana-crash", env=env)
    second.expect("thread: ana-crash (4 messages")
    second.send("/history")
    history = [second.expect("  ") for _ in range(4)]
    assert history[0] == "  human: my ticket is 8842-B"
    assert history[2] == "  human: and my email is ana@example.com"
    assert history[1].startswith("  ai: [offline model]")
    assert second.close() == 0


def test_unreachable_database_is_one_clear_line_and_nonzero_exit() -> None:
    result = run_recollect(
        "chat",
        "--user",
        "u",
        env={"DATABASE_URI": "postgresql://app:hunter2@127.0.0.1:1/recollect"},
        stdin="hello\n",
    )
    assert result.returncode != 0
    errors = result.stderr.strip().splitlines()
    assert len(errors) == 1, result.stderr
    assert errors[0].startswith("recollect: cannot reach the database at postgresql://app:***@")
    assert "Traceback" not in result.stderr
    assert "hunter2" not in result.stderr


def test_demo_runs_a_multi_session_conversation(database_uri: str) -> None:
    result = run_recollect("demo", env={"DATABASE_URI": database_uri})
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.splitlines()[0].startswith(f"model: {OFFLINE_MODEL}")
    assert "Session 1" in out
    assert "Session 2" in out
    assert "tokens sent:" in out
    assert "trimmed from the checkpoint" in out
    assert "How long-term recall ranks" in out
    ranking = out.split("How long-term recall ranks", 1)[1]
    assert "recency" in ranking
    assert "React 19" in ranking
    assert "(technical_stack, 1 days old)" in ranking


def test_db_status_reports_versions(database_uri: str) -> None:
    result = run_recollect("db", "status", env={"DATABASE_URI": database_uri})
    assert result.returncode == 0, result.stderr
    assert "PostgreSQL 18" in result.stdout
    assert "pgvector: 0." in result.stdout
    url = run_recollect("db", "url", env={"DATABASE_URI": database_uri})
    assert url.stdout.strip().splitlines()[-1] == database_uri
