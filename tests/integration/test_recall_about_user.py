"""A direct question about the user keeps its only answer, with the offline e5 embedder, on the
real Postgres behind row-level security: "Which city does the user live in?" recalled nothing
when the only fact was "Relocated to Tokyo for work" (no shared word, a cosine below the
relevance floor)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from psycopg_pool import ConnectionPool

from recollect.longterm.facts import LongTermMemory
from recollect.longterm.records import FactCategory, NewFact
from recollect.models.embeddings import init_embeddings
from recollect.store.scope import Scope

NOW = datetime(2026, 6, 1, tzinfo=UTC)
ANA = Scope.for_user("acme", "ana")
DIRECT = [
    ("Which city does the user live in?", "Relocated to Tokyo for work"),
    ("Where do I live?", "Relocated to Tokyo for work"),
    ("What is my job?", "Spends weekdays fixing teeth at a dental practice"),
    ("Does the user have any pets?", "Adopted a grey tabby from the shelter last spring"),
    ("How old is the user?", "Turned 34 in March"),
    ("What does the user like to eat?", "Orders ramen every Friday night"),
]


@pytest.fixture(scope="module")
def e5() -> Any:
    return init_embeddings("offline")


@pytest.mark.parametrize(("question", "answer"), DIRECT)
def test_a_direct_question_keeps_the_users_only_answer(
    pool: ConnectionPool[Any], e5: Any, question: str, answer: str
) -> None:
    memory = LongTermMemory(pool, embedder=e5)
    memory.ingest(ANA, [NewFact(text=answer, category=FactCategory.EVENT)])
    assert [f.fact.text for f in memory.recall(ANA, question, now=NOW).facts] == [answer]
