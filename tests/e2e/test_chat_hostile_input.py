"""`recollect chat` under hostile input: bad bytes, huge pastes, a database that drops
its connections. Each gets one clear line, and no turn is lost."""

from __future__ import annotations

import psycopg

from recollect.history.limits import DEFAULT_MAX_MESSAGE_CHARS
from tests.support.processes import Interactive

TERMINATE_BACKENDS_SQL = """
SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity
WHERE datname = current_database() AND pid <> pg_backend_pid()
"""


def _history(chat: Interactive, count: int) -> list[str]:
    chat.send("/history")
    return [chat.expect("  ") for _ in range(count)]


def test_invalid_utf8_is_replaced_with_one_line_and_the_next_lines_are_answered(
    database_uri: str,
) -> None:
    chat = Interactive("chat", "--user", "ana", "--thread", "ana-bytes", env=_env(database_uri))
    chat.expect("thread: ana-bytes")
    assert chat.process.stdin is not None
    chat.process.stdin.flush()
    chat.process.stdin.buffer.write(b"my order is 8842-B \xff\xfe\xc3 thanks\n")
    chat.process.stdin.buffer.flush()
    notice = chat.expect("recollect: input line 1 is not valid UTF-8")
    assert "replaced" in notice
    chat.expect("assistant>")
    chat.send("second line")
    chat.expect("assistant>")
    chat.send("third line")
    chat.expect("assistant>")
    history = _history(chat, 6)
    assert history[0] == "  human: my order is 8842-B \ufffd\ufffd\ufffd thanks"
    assert history[2] == "  human: second line"
    assert history[4] == "  human: third line"
    assert chat.close() == 0
    assert not any("Traceback" in line for line in chat.transcript)


def test_huge_messages_are_refused_at_once_and_a_30_kb_one_is_answered(
    database_uri: str,
) -> None:
    chat = Interactive("chat", "--user", "ana", "--thread", "ana-huge", env=_env(database_uri))
    chat.expect("thread: ana-huge")
    thirty_kb = ("the invoice lists 249,00 € for order 8842-B " * 700)[:30_000]
    chat.send(thirty_kb)
    chat.expect("assistant>", timeout=120)
    for size in (100_000, 10_000_000):
        chat.send("x" * size)
        error = chat.expect("recollect: message too large")  # before any work: nothing saved
        assert f"{size:,} characters, the limit is {DEFAULT_MAX_MESSAGE_CHARS:,}" in error
    chat.send("still here?")
    chat.expect("assistant>")
    chat.send("/history")
    chat.expect("  human: still here?")
    assert chat.close() == 0
    assert not any(line.startswith("  human: xxx") for line in chat.transcript), "not saved"
    assert not any("Traceback" in line for line in chat.transcript)


def test_the_chat_resumes_after_the_database_drops_every_connection(database_uri: str) -> None:
    chat = Interactive("chat", "--user", "ana", "--thread", "ana-restart", env=_env(database_uri))
    chat.expect("thread: ana-restart")
    chat.send("turn one")
    chat.expect("assistant>")
    with psycopg.connect(database_uri, autocommit=True) as admin:
        killed = admin.execute(TERMINATE_BACKENDS_SQL).fetchone()
    assert killed is not None
    assert killed[0] >= 1, "the chat's pooled connections were terminated"
    chat.send("turn two")
    chat.expect("assistant>")
    chat.send("turn three")
    chat.expect("assistant>")
    history = _history(chat, 6)
    assert [line for line in history if line.startswith("  human:")] == [
        "  human: turn one",
        "  human: turn two",
        "  human: turn three",
    ]
    assert chat.close() == 0
    assert not any("Traceback" in line for line in chat.transcript)


def _env(database_uri: str) -> dict[str, str]:
    return {"DATABASE_URI": database_uri}
