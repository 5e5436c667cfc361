"""Export and show: everything a user has, in one document, and nothing of anyone else."""

from __future__ import annotations

import json
from typing import Any

from langgraph.checkpoint.postgres import PostgresSaver
from psycopg_pool import ConnectionPool

from recollect.privacy.export import EXPORT_FORMAT, describe_user, export_user
from recollect.store.scope import Scope
from recollect.store.threads import list_threads
from tests.support.tenant_data import populate_user

ANA = Scope.for_user("acme", "ana")
BO = Scope.for_user("acme", "bo")


def test_export_holds_every_store_with_fact_history_and_transcripts(
    pool: ConnectionPool[Any], checkpointer: PostgresSaver
) -> None:
    ids = populate_user(pool, checkpointer, ANA)
    populate_user(pool, checkpointer, BO)

    document = export_user(pool, ANA, checkpointer)

    assert document["format"] == EXPORT_FORMAT
    assert "bo " not in json.dumps(document), "another user's data leaked into the export"
    facts = {f["text"]: f for f in document["facts"]}
    porto, lisbon = facts["ana lives in Porto"], facts["ana lives in Lisbon"]
    assert porto["status"] == "superseded"
    assert porto["superseded_by"] == lisbon["id"]
    assert lisbon["replaces"] == [porto["id"]]
    assert facts["ana prefers tea"]["status"] == "live"
    assert "embedding" not in facts["ana prefers tea"]
    assert document["profile"][0]["fields"]["name"][0]["value"] == "Ana"
    [item] = document["store_items"]
    assert (item["labels"], item["key"], item["value"]) == (
        ["notes"],
        "seat",
        {"text": "ana likes aisles"},
    )
    assert facts["ana likes aisles"]["id"] == item["fact_id"]
    assert document["episodes"][0]["summary"] == "ana asked about a refund"
    assert [w["id"] for w in document["workflows"]] == [ids["workflow"]]
    assert [r["order_id"] for r in document["refunds"]] == ["8842-ANA"]
    assert [a["transition"] for a in document["audit"]] == ["create", "submit", "approve"]
    assert [r["text"] for r in document["review_queue"]] == ["ana maybe likes jazz"]
    assert [j["thread_id"] for j in document["jobs"]] == [ids["thread"]]
    traces = document["memory_traces"]
    assert [(t["thread_id"], t["turn"]) for t in traces] == [(ids["thread"], 1), (ids["thread"], 2)]
    assert traces[1]["trace"]["user_message"]["text"] == "my order is 8842-B"
    threads = {t["thread_id"]: t for t in document["threads"]}
    assert threads[ids["approval_thread"]]["kind"] == "approval"
    transcript = threads[ids["thread"]]["transcript"]
    said = [m["data"]["content"] for m in transcript if m["type"] == "human"]
    assert said == ["hello", "my order is 8842-B"]
    json.dumps(document)  # one JSON document, no stray types


def test_approval_threads_are_owned_like_agent_threads(
    pool: ConnectionPool[Any], checkpointer: PostgresSaver
) -> None:
    ids = populate_user(pool, checkpointer, ANA)
    kinds = {t.thread_id: t.kind for t in list_threads(pool, ANA)}
    assert kinds == {ids["thread"]: "agent", ids["approval_thread"]: "approval"}
    assert list_threads(pool, BO) == []


def test_show_reads_like_an_answer(pool: ConnectionPool[Any], checkpointer: PostgresSaver) -> None:
    assert "nothing yet" in describe_user(pool, ANA)
    populate_user(pool, checkpointer, ANA)
    text = describe_user(pool, ANA)
    assert text.startswith("What I remember about ana (acme):")
    assert "name: Ana" in text
    assert "- ana lives in Lisbon" in text
    assert "Porto" not in text, "superseded facts are history, not what is remembered"
    assert "1 fact(s) awaiting review" in text
