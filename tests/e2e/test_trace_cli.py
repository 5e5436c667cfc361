"""`recollect trace` and `recollect stats` after a 50-turn chat driven as a user drives it: the
planted value's whole story, turn by turn, from the command line."""

from __future__ import annotations

import json
import time

import psycopg

from tests.support.processes import Interactive, run_recollect

VALUE = "Zephyr-4471"
FILLER = [
    "tell me something about the weather patterns in coastal towns",
    "how do I keep my houseplants alive through the winter months",
    "what is a good way to plan a week of cooking in advance",
    "any tips for a long train journey with a lot of luggage",
    "how should I prepare for a job interview next month",
]
CAUGHT_UP_WITHIN_S = 180
CAUGHT_UP = """
SELECT (SELECT count(*) FROM facts
        WHERE strpos(text, %(text)s) > 0 AND deleted_at IS NULL AND superseded_by IS NULL) > 0
   AND NOT EXISTS (SELECT 1 FROM memory_jobs
                   WHERE thread_id = %(thread)s
                     AND (status = 'running' OR (status = 'pending' AND run_after <= now())))
"""
"""The planted fact is stored, and no job of the thread is running or due: at most the last
few turns (fewer than RECOLLECT_EXTRACT_EVERY_TURNS) wait unextracted, however the worker's
jobs fell."""


def wait_until_caught_up(database_uri: str, thread: str, text: str) -> None:
    """Until the chat's background worker has done every due job: it runs beside the turns,
    as fast as the machine lets it, and what the last turn recalls (the fact, or the profile
    that still carries it) depends on how far it got."""
    deadline = time.monotonic() + CAUGHT_UP_WITHIN_S
    with psycopg.connect(database_uri, autocommit=True) as conn:
        while True:
            row = conn.execute(CAUGHT_UP, {"text": text, "thread": thread}).fetchone()
            if row is not None and row[0]:
                return
            assert time.monotonic() < deadline, f"the worker did not catch up on {thread}"
            time.sleep(0.2)


def test_fifty_turns_then_the_planted_values_whole_story(database_uri: str) -> None:
    env = {
        "DATABASE_URI": database_uri,
        "RECOLLECT_USER_ID": "ana",
        "RECOLLECT_MAX_HISTORY_TOKENS": "300",
        "RECOLLECT_EXTRACT_EVERY_TURNS": "5",
    }
    started = time.monotonic()
    chat = Interactive("chat", "--user", "ana", "--thread", "ana-story", env=env)
    chat.expect("thread: ana-story")
    for turn in range(1, 51):
        if turn == 3:
            chat.send(f"I work on project {VALUE}.")
        elif turn == 50:
            wait_until_caught_up(database_uri, "ana-story", VALUE)
            chat.send("which project do I work on?")
        else:
            chat.send(f"{FILLER[turn % len(FILLER)]} (turn {turn})")
        chat.expect("assistant>")
    assert chat.close() == 0
    chat_s = time.monotonic() - started

    found = run_recollect("trace", "--thread", "ana-story", "--find", VALUE, "--json", env=env)
    assert found.returncode == 0, found.stderr
    story = json.loads(found.stdout)
    turns = {t["turn"]: t["events"] for t in story["turns"] if t["kind"] == "turn"}
    jobs = [t for t in story["turns"] if t["kind"] == "extraction"]
    print(f"\n50 turns in {chat_s:.1f}s; {story['stopped']}")
    for t in story["turns"]:
        print(f"  {t['kind']} {t['turn']}: {'; '.join(t['events'])}")
    assert "said by the user" in turns[3]
    assert story["stages"]["said"] == {"first_turn": 3, "last_turn": 3}
    everything = [e for events in turns.values() for e in events]
    assert any(e.startswith("trimmed from the checkpointed window") for e in everything)
    assert any(e.startswith("folded into summary version") for e in everything)
    assert any(e.startswith("extracted: stored as ") for j in jobs for e in j["events"])
    assert [m["status"] for m in story["memory"]] == ["live"]
    assert VALUE in story["memory"][0]["text"]
    shown = ("shown: recalled fact", "shown: in the user profile")  # the profile may carry it
    assert any(e.startswith(shown) for e in turns[50]), turns[50]
    assert story["stopped"] == "still shown to the model at the last turn (50)"
    assert story["stages"]["shown"]["last_turn"] == 50

    table = run_recollect("trace", "--thread", "ana-story", "--turn", "50", env=env)
    assert table.returncode == 0, table.stderr
    assert table.stdout.startswith("turn 50  model offline")
    assert "recall     score  dense lexical" in table.stdout
    assert VALUE in table.stdout

    stats = run_recollect("stats", "--since", "1h", "--json", env=env)
    assert stats.returncode == 0, stats.stderr
    figures = json.loads(stats.stdout)
    assert figures["turns"] == 50
    assert figures["candidate_facts"] >= 1
    assert figures["checkpoint_bytes_per_thread_max"] > 0


def test_bad_trace_input_is_one_line(database_uri: str) -> None:
    env = {"DATABASE_URI": database_uri}
    for args, expected in (
        (("trace", "--thread", "nope"), "recollect: no traces for thread 'nope' of user"),
        (("trace", "--thread", "t", "--turn", "0"), "recollect: --turn counts from 1, got 0"),
        (("trace", "--thread", "t", "--find", " "), "recollect: --find takes 1 to 200"),
        (("stats", "--since", "yesterday"), "recollect: --since takes a duration"),
    ):
        result = run_recollect(*args, env=env)
        assert result.returncode == 2, (args, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, result.stderr
        assert lines[0].startswith(expected), lines[0]


def test_a_chat_thread_is_traced_without_naming_its_user(database_uri: str) -> None:
    """`recollect chat` names a thread for its user (`ana-1a2b3c4d`): `trace` finds it as
    hers; another thread of hers, named otherwise, is one line that says to pass `--user`."""
    env = {"DATABASE_URI": database_uri}
    chat = Interactive("chat", "--user", "ana", "--no-worker", env=env)
    started = chat.expect("thread: ")
    thread = started.split("thread: ", 1)[1].split(" ", 1)[0]
    chat.send("I keep bees on the roof")
    chat.expect("assistant>")
    chat.send("/exit")
    assert chat.close() == 0

    found = run_recollect("trace", "--thread", thread, env=env)
    assert found.returncode == 0, found.stderr
    assert "I keep bees on the roof" in found.stdout

    named = run_recollect(
        "chat", "--user", "ana", "--thread", "bees", "--no-worker", env=env, stdin="hi\n"
    )
    assert named.returncode == 0, named.stderr
    missing = run_recollect("trace", "--thread", "bees", env=env)
    assert missing.returncode != 0
    (line,) = missing.stderr.strip().splitlines()
    assert "pass --user" in line, missing.stderr
    assert run_recollect("trace", "--thread", "bees", "--user", "ana", env=env).returncode == 0
