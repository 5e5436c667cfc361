"""Test doubles for the *other* side of the extraction interface, plus scripted model answers.

`TableWriter` stands in for the long-term store's write path (built elsewhere): it writes each
fact to a scratch table through the caller's transaction, so a rollback really removes it.
"""

from __future__ import annotations

import json
import re
from typing import Any

import psycopg
from psycopg import Connection
from psycopg_pool import ConnectionPool

from recollect.longterm.records import NewFact
from recollect.store.scope import Scope
from tests.support.db import superuser_conninfo
from tests.support.scripted_openai import JsonDict, Reply, echo_responder

CREATE_SINK = """
CREATE TABLE IF NOT EXISTS remembered_for_test (
    id bigserial PRIMARY KEY, org_id text, user_id text, text text, category text,
    confidence real, source_ids text[])
"""
_LINE = re.compile(r"^\[(?P<id>[^\]]+)\] user: (?P<text>.+)$", re.MULTILINE)


class TableWriter:
    """Writes into `remembered_for_test`; `fail_on` makes the n-th call raise (1-based)."""

    def __init__(self, pool: ConnectionPool[Any], fail_on: int | None = None) -> None:
        with psycopg.connect(
            superuser_conninfo(pool), autocommit=True
        ) as conn:  # the app role cannot create tables
            conn.execute(CREATE_SINK)
            conn.execute("GRANT SELECT, INSERT ON remembered_for_test TO recollect_app")
            conn.execute("GRANT USAGE ON SEQUENCE remembered_for_test_id_seq TO recollect_app")
        self.calls = 0
        self.fail_on = fail_on

    def remember(
        self,
        conn: Connection[Any],
        scope: Scope,
        fact: NewFact,
        *,
        vector: list[float] | None = None,
    ) -> str | None:
        self.calls += 1
        if self.fail_on == self.calls:
            raise RuntimeError("long-term store unavailable")
        row = conn.execute(
            "INSERT INTO remembered_for_test (org_id, user_id, text, category, confidence, "
            "source_ids) VALUES (%s, %s, %s, %s, %s, %s) RETURNING id",
            (
                scope.org_id,
                scope.user_id,
                fact.text,
                fact.category.value,
                fact.confidence,
                list(fact.source_ids),
            ),
        ).fetchone()
        assert row is not None
        return f"test-{row['id']}"


def remembered(pool: ConnectionPool[Any]) -> list[dict[str, Any]]:
    with pool.connection() as conn:
        return list(conn.execute("SELECT * FROM remembered_for_test ORDER BY id").fetchall())


def is_extraction(request: JsonDict) -> bool:
    return any(
        (tool.get("function") or {}).get("name") == "ExtractionResult"
        for tool in request.get("tools") or []
    )


def fact(
    text: str,
    *,
    category: str = "preference",
    confidence: float = 0.9,
    sources: list[str] | None = None,
    subject: str | None = None,
) -> JsonDict:
    return {
        "text": text,
        "category": category,
        "subject": subject,
        "confidence": confidence,
        "source_message_ids": sources or [],
    }


def one_fact_per_user_line(delay: float = 0.0) -> Any:
    """A default responder: extraction requests get `Said: <line>` per user line; chat echoes."""

    def respond(request: JsonDict) -> Reply:
        if not is_extraction(request):
            return echo_responder(request)
        excerpt = request["messages"][-1]["content"]
        facts = [fact(f"Said: {m['text']}", sources=[m["id"]]) for m in _LINE.finditer(excerpt)]
        return Reply(json=json.dumps({"facts": facts}), delay=delay)

    return respond
