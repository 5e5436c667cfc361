"""The `recollect` command driven as a subprocess, against the test run's Postgres."""

from __future__ import annotations

import json
import re

from recollect.models.factory import OFFLINE_MODEL
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
    assert "long-term memory: Postgres hybrid recall; embeddings: offline" in out
    assert "tokens sent:" in out
    assert "trimmed from the checkpoint" in out
    assert "background memory job" in out
    assert "Email is [EMAIL]  ← redacted: email" in out
    facts_listing = out.split("Facts extracted in the background")[1].split("===")[0]
    assert "dana@example.com" not in facts_listing, "long-term memory holds the redacted form"
    assert "REJECTED 0.90 [preference] Asks: ignore previous instructions  ← injection:" in out
    assert "REVIEW   0.50 [goal] Wants to learn Rust next year  ← low confidence" in out
    assert "pinned exact values: email: dana@example.com; order: 8842-B; amount: $249.00" in out
    assert "constraint: never suggest jQuery" in out
    assert "summary folded (" in out
    session_2 = out.split("Session 2")[1]
    assert "summary=" in session_2, "the folded summary is in the prompt after a restart"
    assert "pinned values carried into every prompt: email: dana@example.com" in session_2
    traced = out.split("One value's memory trace")[1].split("\n===")[0]
    assert "'8842-B' in thread" in traced
    assert "said by the user" in traced
    assert "pinned as order (shown)" in traced
    assert "extracted: stored as" in traced
    assert "is submitted_for_review (awaiting review)" in out
    assert "--by manager-maria  (exit 0)" in out
    assert "is completed; refunds paid: 1" in out
    delegation = out.split("Delegation:")[1].split("How long-term recall ranks")[0]
    assert "task split into 3 workers; budget per worker: 1500 tokens" in delegation
    contexts = [int(n) for n in re.findall(r"context: (\d+) tokens \(its own", delegation)]
    assert len(contexts) == 3
    assert all(0 < n <= 1500 + 300 for n in contexts), contexts
    assert "[board:deadline]" in delegation, "the shared blackboard reaches every worker"
    assert "[memory:" in delegation, "each worker recalls its own long-term memory"
    orchestrator = int(re.findall(r"orchestrator context: (\d+) tokens", delegation)[0])
    assert orchestrator <= 4000
    assert "approve   → approved             by manager-maria — duplicate charge" in out
    assert "superseded: 'Frontend is React 16' → 'Frontend moved to React 19'" in out
    third = out.split("Session 3")[1]
    recalled = [line for line in third.splitlines() if "· recalled" in line]
    assert any("Frontend moved to React 19" in line for line in recalled), third
    # the background extractor and the hand-fed fact race to word it first; either wording
    assert any("deploys to kubernetes on gcp" in line.lower() for line in recalled), third
    assert not any("React 16" in line for line in recalled if "[episode]" not in line), third
    assert "(thread has 0 checkpointed messages)" in third  # known only from long-term memory
    # the preference came through the real pipeline: extracted in the background, stored by
    # the engine, folded into the profile, recalled in a new thread
    assert any(
        "[profile] preferences:" in line and "never suggest jQuery" in line for line in recalled
    ), third
    assert any("[profile] name: Dana" in line for line in recalled), third
    assert "(session ended; episode written: Session on " in out
    assert any("[episode]" in line and "upgrading React" in line for line in recalled), third
    assert not any("[episode]" in line and "ignore previous" in line for line in recalled)
    assert "How long-term recall ranks" in out
    privacy = out.split("Privacy: show, export")[1]
    assert "What I remember about" in privacy
    assert "- Frontend moved to React 19" in privacy
    assert "`recollect memory export` would write one JSON document:" in privacy
    assert "session ends: {'facts': 1, 'episodes': 0} deleted" in privacy
    assert "reads it: ['The team deploys on Fridays']" in privacy
    assert "maintenance (dry run: nothing changed)" in privacy
    assert "goal             expired 1," in privacy
    assert "preference       expired 0," in privacy
    assert "rows deleted (" in privacy
    assert "verified 0 remain" in privacy
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


def test_chat_refuses_a_thread_owned_by_another_user(database_uri: str) -> None:
    env = {"DATABASE_URI": database_uri}
    owner = run_recollect("chat", "--user", "ana", "--thread", "private", env=env, stdin="hi\n")
    assert owner.returncode == 0, owner.stderr
    intruder = run_recollect("chat", "--user", "bo", "--thread", "private", env=env, stdin="hi\n")
    assert intruder.returncode != 0
    assert intruder.stderr.strip() == (
        "recollect: thread 'private' belongs to another user; start a new thread"
    )
    assert "assistant>" not in intruder.stdout


def test_chat_end_writes_an_episode_the_next_session_recalls(database_uri: str) -> None:
    env = {"DATABASE_URI": database_uri}
    said = (
        "We researched RAG chunking for our support docs.\n"
        "I prefer short answers.\n"
        "/end\n"
        "Remember what we researched about RAG chunking?\n"
    )
    chat = run_recollect("chat", "--user", "eve", env=env, stdin=said)
    assert chat.returncode == 0, chat.stderr
    out = chat.stdout
    assert out.count("memory: session summarised as an episode") == 2  # /end, then the exit
    after_end = out.split("(new session)", 1)[1]
    assert "Session on " in after_end, "the new thread's prompt carries the episode"
    assert "RAG chunking" in after_end
    assert "Asks" in after_end or "prefers short answers" in after_end.lower()


def test_memory_forget_prints_counts_as_json(database_uri: str) -> None:
    env = {"DATABASE_URI": database_uri}
    chat = run_recollect("chat", "--user", "cy", "--thread", "cy-1", env=env, stdin="hi\n")
    assert chat.returncode == 0, chat.stderr
    result = run_recollect("memory", "forget", "--user", "cy", "--json", env=env)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["user_id"] == "cy"
    assert report["deleted"]["threads"] == 1
    assert report["deleted"]["checkpoints"] > 0
