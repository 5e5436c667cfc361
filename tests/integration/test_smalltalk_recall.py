"""Small talk recalls nothing, a question behind it still does: through the engine, through
the `recall` node over the engine, and through the node over `RecollectStore`."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime
from psycopg_pool import ConnectionPool

from recollect.basestore.store import RecollectStore
from recollect.longterm.configured import configured_memory
from recollect.longterm.facts import LongTermMemory
from recollect.longterm.records import FactCategory, NewFact, ProfileEntry
from recollect.prebuilt.recall import RecallNode
from recollect.state.context import Context
from recollect.store.scope import Scope

NOW = datetime(2026, 6, 1, tzinfo=UTC)
NORA = Scope.for_user("acme", "nora")
HOME = "Lives in Oslo, at 14 Rosenweg."
FACTS = (
    HOME,
    "Credit card number 4111 1111 1111 1111.",
    "Social security number 078-05-1120.",
    "Works as a nurse at the city hospital.",
    "Has a sister called Marta.",
)
SMALL_TALK = ("thanks!", "ok cool", "jajaja", "ありがとう", "👍")
QUESTION = "thanks, where do I live?"


@pytest.fixture
def memory(pool: ConnectionPool[Any], monkeypatch: pytest.MonkeyPatch) -> LongTermMemory:
    monkeypatch.setenv("RECOLLECT_EMBEDDINGS", "offline")
    monkeypatch.delenv("RECOLLECT_RERANKER", raising=False)
    memory = configured_memory(pool)
    memory.ingest(
        NORA, [NewFact(text=t, category=FactCategory.BIOGRAPHICAL, confidence=1.0) for t in FACTS]
    )
    memory.set_profile(NORA, [ProfileEntry(key="name", value="Nora")])
    return memory


def _node_recall(node: RecallNode, text: str, store: RecollectStore | None = None) -> list[str]:
    runtime = Runtime(context=Context(user_id="nora", org_id="acme"), store=store)
    state: Any = {"messages": [HumanMessage(text)]}
    return [item["text"] for item in node(state, runtime)["recalled"] if item["kind"] != "profile"]


@pytest.mark.parametrize("text", SMALL_TALK)
def test_small_talk_recalls_the_profile_alone(memory: LongTermMemory, text: str) -> None:
    found = memory.recall(NORA, text, now=NOW)
    assert found.facts == ()
    assert found.episodes == ()
    assert [e.key for e in found.profile] == ["name"]


def test_a_question_behind_thanks_recalls_where_the_user_lives(memory: LongTermMemory) -> None:
    found = memory.recall(NORA, QUESTION, now=NOW)
    assert HOME in [f.fact.text for f in found.facts]


def test_the_recall_node_brings_no_memory_into_the_prompt_for_thanks(
    memory: LongTermMemory,
) -> None:
    node = RecallNode(memory)
    assert _node_recall(node, "thanks!") == []
    assert HOME in _node_recall(node, QUESTION)


def test_a_store_backed_recall_node_brings_none_either(memory: LongTermMemory) -> None:
    node, store = RecallNode(None), RecollectStore(memory)
    assert _node_recall(node, "thanks!", store) == []
    assert HOME in _node_recall(node, QUESTION, store)
    scores = [i.score for i in store.search(("acme", "nora", "facts"), query="thanks!")]
    assert scores, "the store lists everything"
    assert set(scores) == {0.0}, "ranked by nothing"
