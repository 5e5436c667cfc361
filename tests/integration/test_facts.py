"""The long-term memory engine on the real Postgres, embedding through the scripted server."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from langchain_openai import ChatOpenAI, OpenAIEmbeddings
from psycopg_pool import ConnectionPool

from recollect.longterm.facts import LongTermMemory, UnsupportedScopeError
from recollect.longterm.records import (
    FactCategory,
    NewEpisode,
    NewFact,
    ProfileEntry,
    RememberAction,
)
from recollect.longterm.supersession import ModelJudge
from recollect.longterm.vectors import EmbeddingError
from recollect.store.scope import Scope
from tests.support.memory import memory_over
from tests.support.scripted_openai import ScriptedOpenAI, hashed_embedding

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
ANA = Scope.for_user("acme", "ana")
BEN = Scope.for_user("acme", "ben")


def react(text: str, days_ago: float, confidence: float, subject: str | None) -> NewFact:
    return NewFact(
        text=text,
        category=FactCategory.TECHNICAL_STACK,
        subject=subject,
        confidence=confidence,
        learned_at=NOW - timedelta(days=days_ago),
    )


def judge_for(server: ScriptedOpenAI) -> ModelJudge:
    return ModelJudge(ChatOpenAI(model="gpt-4.1-mini", base_url=server.base_url, api_key="t"))  # type: ignore[arg-type]


def test_stale_react_fact_is_superseded_and_only_react_19_is_recalled(
    pool: ConnectionPool[Any], scripted_llm: ScriptedOpenAI
) -> None:
    memory = memory_over(pool, scripted_llm)
    old = memory.remember(ANA, react("uses React 16", 240, 0.9, "frontend_framework"))
    new = memory.remember(ANA, react("moved to React 19", 1, 0.7, "frontend_framework"))
    assert old.action is RememberAction.INSERTED
    assert new.action is RememberAction.SUPERSEDED
    assert new.replaced == (old.fact.id,)
    assert new.decided_by == "rule"
    assert scripted_llm.chat_requests == []  # the rule decided: no model call

    got = memory.recall(ANA, "what framework do they use?", now=NOW)
    texts = [f.fact.text for f in got.facts]
    assert texts == ["moved to React 19"]
    assert got.facts[0].score > 0
    assert got.facts[0].similarity is not None
    history = memory.facts(ANA, include_superseded=True)
    assert {f.text: f.superseded_by for f in history} == {
        "uses React 16": new.fact.id,
        "moved to React 19": None,
    }


def test_without_subjects_the_model_decides_the_contradiction(
    pool: ConnectionPool[Any], scripted_llm: ScriptedOpenAI
) -> None:
    memory = memory_over(pool, scripted_llm, judge=judge_for(scripted_llm))
    memory.remember(ANA, react("the frontend uses React 16", 240, 0.9, None))
    scripted_llm.reply_json({"contradicts": True})
    result = memory.remember(ANA, react("the frontend moved to React 19", 1, 0.7, None))
    assert result.action is RememberAction.SUPERSEDED
    assert result.decided_by == "model"
    prompt = scripted_llm.chat_requests[-1]["messages"][-1]["content"]
    assert "React 16" in prompt
    assert "React 19" in prompt
    texts = [f.fact.text for f in memory.recall(ANA, "react frontend", now=NOW).facts]
    assert texts == ["the frontend moved to React 19"]


def test_a_model_no_or_a_model_failure_keeps_both_facts(
    pool: ConnectionPool[Any], scripted_llm: ScriptedOpenAI
) -> None:
    memory = memory_over(pool, scripted_llm, judge=judge_for(scripted_llm))
    memory.remember(ANA, react("the backend uses Django", 30, 0.9, None))
    scripted_llm.reply_json({"contradicts": False})
    kept = memory.remember(ANA, react("the backend also runs Celery workers", 1, 0.8, None))
    scripted_llm.reply_error(500, "judge down")
    failed = memory.remember(ANA, react("the backend queues use Redis", 1, 0.8, None))
    assert kept.action is RememberAction.INSERTED
    assert failed.action is RememberAction.INSERTED
    assert len(memory.facts(ANA)) == 3


def test_a_repeated_fact_reinforces_instead_of_inserting(
    pool: ConnectionPool[Any], scripted_llm: ScriptedOpenAI
) -> None:
    memory = memory_over(pool, scripted_llm)
    first = memory.remember(
        ANA,
        NewFact(text="Prefers dark mode", category="preference", confidence=0.6,
                learned_at=NOW - timedelta(days=10), source_ids=("m1",)),
    )  # fmt: skip
    again = memory.remember(
        ANA,
        NewFact(text="prefers dark mode.", category="preference", confidence=0.8,
                learned_at=NOW, source_ids=("m7",)),
    )  # fmt: skip
    assert again.action is RememberAction.REINFORCED
    assert again.fact.id == first.fact.id
    assert again.fact.confidence > first.fact.confidence
    assert again.fact.last_reinforced_at == NOW
    assert again.fact.source_ids == ("m1", "m7")
    assert len(memory.facts(ANA)) == 1


def test_an_older_fact_arriving_late_is_stored_already_superseded(
    pool: ConnectionPool[Any], scripted_llm: ScriptedOpenAI
) -> None:
    memory = memory_over(pool, scripted_llm)
    new = memory.remember(ANA, react("moved to React 19", 1, 0.7, "frontend_framework"))
    late = memory.remember(ANA, react("uses React 16", 240, 0.9, "frontend_framework"))
    assert late.action is RememberAction.INSERTED_STALE
    assert late.fact.superseded_by == new.fact.id
    assert [f.fact.text for f in memory.recall(ANA, "React", now=NOW).facts] == [
        "moved to React 19"
    ]


def test_user_a_never_sees_user_b_across_1000_random_queries(
    pool: ConnectionPool[Any], scripted_llm: ScriptedOpenAI
) -> None:
    memory = memory_over(pool, scripted_llm)
    rng = random.Random(4)
    words = [
        "react",
        "python",
        "berlin",
        "coffee",
        "tea",
        "deploy",
        "kubernetes",
        "invoice",
        "billing",
        "dark",
        "mode",
    ]
    words += ["sister", "marathon", "vegan", "postgres", "rust"]
    for scope in (ANA, BEN, Scope.for_user("other-org", "ana")):
        facts = [
            NewFact(text=" ".join(rng.choices(words, k=5)), category=rng.choice(list(FactCategory)))
            for _ in range(60)
        ]
        memory.ingest(scope, facts)
    ana_ids = {f.id for f in memory.facts(ANA)}
    assert len(ana_ids) == 60
    returned = 0
    for _ in range(1000):
        query = " ".join(rng.choices(words, k=rng.randint(1, 4)))
        got = memory.recall(ANA, query, k=20, query_embedding=hashed_embedding(query), now=NOW)
        ids = {f.fact.id for f in got.facts}
        assert ids <= ana_ids
        assert all(f.fact.user_id == "ana" and f.fact.org_id == "acme" for f in got.facts)
        returned += len(ids)
    assert returned >= 1000 * 10  # the queries did find things: the check was not vacuous


def test_session_memory_stays_in_its_session_and_sees_the_users_memory(
    pool: ConnectionPool[Any],
) -> None:
    memory = LongTermMemory(pool)
    memory.remember(ANA, NewFact(text="lives in Lisbon", category="biographical"))
    s1 = Scope.for_session("acme", "ana", "s1")
    s2 = Scope.for_session("acme", "ana", "s2")
    memory.remember(s1, NewFact(text="is planning a surprise party in Lisbon", category="goal"))
    assert {f.fact.text for f in memory.recall(s1, "Lisbon", now=NOW).facts} == {
        "lives in Lisbon",
        "is planning a surprise party in Lisbon",
    }
    assert [f.fact.text for f in memory.recall(s2, "Lisbon", now=NOW).facts] == ["lives in Lisbon"]
    assert [f.fact.text for f in memory.recall(ANA, "Lisbon", now=NOW).facts] == ["lives in Lisbon"]


def test_forgotten_facts_are_never_recalled(pool: ConnectionPool[Any]) -> None:
    memory = LongTermMemory(pool)
    fact = memory.remember(ANA, NewFact(text="allergic to peanuts", category="constraint"))
    assert memory.forget(ANA, fact.fact.id)
    assert not memory.forget(BEN, fact.fact.id)  # another user cannot touch it
    assert memory.recall(ANA, "peanuts allergic", now=NOW).facts == ()


def test_profile_is_always_included_and_episodes_are_recalled(
    pool: ConnectionPool[Any], scripted_llm: ScriptedOpenAI
) -> None:
    memory = memory_over(pool, scripted_llm)
    memory.set_profile(
        ANA, [ProfileEntry(key="name", value="Ana"), ProfileEntry(key="role", value="SRE")]
    )
    episode_id = memory.record_episode(
        ANA,
        NewEpisode(summary="Debugged a Kubernetes outage caused by an expired certificate",
                   occurred_at=NOW - timedelta(days=3)),
    )  # fmt: skip
    got = memory.recall(ANA, "kubernetes certificate", now=NOW)
    assert [(p.key, p.value) for p in got.profile] == [("name", "Ana"), ("role", "SRE")]
    assert [e.id for e in got.episodes] == [episode_id]
    assert got.episodes[0].score > 0
    unrelated = memory.recall(ANA, "", now=NOW)
    assert [p.key for p in unrelated.profile] == ["name", "role"]
    assert memory.recall(BEN, "kubernetes certificate", now=NOW).profile == ()


def test_k_and_the_token_budget_bound_what_is_returned(pool: ConnectionPool[Any]) -> None:
    memory = LongTermMemory(pool)
    memory.ingest(ANA, [NewFact(text=f"tea fact number {i} " + "x" * 40 * i, category="preference")
                        for i in range(12)])  # fmt: skip
    assert len(memory.recall(ANA, "tea", k=5, now=NOW).facts) == 5
    small = memory.recall(ANA, "tea", k=12, token_budget=60, now=NOW)
    assert 0 < len(small.facts) < 12
    assert small.tokens <= 60
    scores = [f.score for f in memory.recall(ANA, "tea", k=12, now=NOW).facts]
    assert scores == sorted(scores, reverse=True)


def test_without_an_embedder_or_when_it_fails_recall_is_lexical(
    pool: ConnectionPool[Any],
) -> None:
    broken = OpenAIEmbeddings(
        model="text-embedding-3-small", base_url="http://127.0.0.1:9/v1", api_key="t",  # type: ignore[arg-type]
        check_embedding_ctx_length=False, max_retries=0, timeout=2,
    )  # fmt: skip
    memory = LongTermMemory(pool, embedder=broken)
    stored = memory.remember(ANA, NewFact(text="drinks oolong tea", category="preference"))
    assert stored.action is RememberAction.INSERTED  # the write was not lost
    got = memory.recall(ANA, "tea", now=NOW)
    assert [f.fact.text for f in got.facts] == ["drinks oolong tea"]
    assert got.facts[0].similarity is None
    assert got.facts[0].lexical is not None


def test_embeddings_of_another_dimension_are_ignored_not_an_error(
    pool: ConnectionPool[Any], scripted_llm: ScriptedOpenAI
) -> None:
    memory = memory_over(pool, scripted_llm)  # 64-dimensional
    memory.remember(ANA, NewFact(text="runs on Postgres", category="technical_stack"))
    got = memory.recall(ANA, "Postgres", query_embedding=[1.0] + [0.0] * 31, now=NOW)
    assert [f.fact.text for f in got.facts] == ["runs on Postgres"]
    assert got.facts[0].similarity is None


def test_bad_input_is_refused_clearly_and_writes_nothing(pool: ConnectionPool[Any]) -> None:
    memory = LongTermMemory(pool)
    with pytest.raises(ValueError, match="timezone-aware"):
        memory.remember(ANA, NewFact(text="x", category="goal", learned_at=datetime(2026, 1, 1)))
    with pytest.raises(ValueError, match="needs some text"):
        memory.remember(ANA, NewFact(text="   ", category="goal"))
    with pytest.raises(UnsupportedScopeError):
        memory.set_profile(Scope.for_org("acme", "ana"), [ProfileEntry(key="k", value="v")])
    facts = [NewFact(text="a", category="goal"), NewFact(text="b", category="goal")]
    with pytest.raises(ValueError, match="share a dimension"):
        memory.ingest(ANA, facts, embeddings=[[1.0, 0.0], [1.0, 0.0, 0.0]])
    with pytest.raises(EmbeddingError, match="finite"):
        memory.ingest(ANA, facts, embeddings=[[1.0, float("nan")], None])
    with pytest.raises(ValueError, match="2 facts"):
        memory.ingest(ANA, facts, embeddings=[[1.0]])
    with pytest.raises(ValueError, match="k must not be negative"):
        memory.recall(ANA, "x", k=-1)
    assert memory.facts(ANA) == []


def test_ingest_is_all_or_nothing(pool: ConnectionPool[Any]) -> None:
    memory = LongTermMemory(pool)
    # a row only the database refuses (validation bypassed), after a good one
    bad = NewFact.model_construct(
        text="bad", category=FactCategory.GOAL, subject=None, confidence=1.5, source_ids=(),
        learned_at=None, metadata={},
    )  # fmt: skip
    with pytest.raises(psycopg.errors.CheckViolation):
        memory.ingest(ANA, [NewFact(text="fine", category="goal"), bad])
    assert memory.facts(ANA) == []
    assert memory.ingest(ANA, [NewFact(text="fine", category="goal")]) == 1
    assert [f.text for f in memory.facts(ANA)] == ["fine"]


def test_full_text_works_for_any_tenant_id_and_stop_words_match_nothing(
    pool: ConnectionPool[Any],
) -> None:
    memory = LongTermMemory(pool)
    odd = Scope.for_user("Straße GmbH", "用户 42")
    memory.remember(odd, NewFact(text="drinks matcha every morning", category="preference"))
    memory.remember(ANA, NewFact(text="drinks matcha too", category="preference"))
    got = memory.recall(odd, "matcha", now=NOW)
    assert [f.fact.text for f in got.facts] == ["drinks matcha every morning"]
    assert got.facts[0].lexical is not None
    assert memory.recall(odd, "the and of", now=NOW).facts == ()


def test_wide_embeddings_use_the_heap_path_and_small_ones_the_covering_index(
    pool: ConnectionPool[Any],
) -> None:
    memory = LongTermMemory(pool)
    wide = [1.0] + [0.0] * 1535  # e.g. text-embedding-3-small: too big for the covering index
    narrow = [0.0, 1.0] + [0.0] * 382
    facts = [
        NewFact(text="wide one", category="event"),
        NewFact(text="narrow one", category="event"),
    ]
    memory.ingest(ANA, facts[:1], embeddings=[wide])
    memory.ingest(ANA, facts[1:], embeddings=[narrow])
    got_wide = memory.recall(ANA, "which vector", query_embedding=wide, now=NOW)
    got_narrow = memory.recall(ANA, "which vector", query_embedding=narrow, now=NOW)
    assert [(f.fact.text, round(f.similarity or 0, 3)) for f in got_wide.facts] == [
        ("wide one", 1.0)
    ]
    assert [(f.fact.text, round(f.similarity or 0, 3)) for f in got_narrow.facts] == [
        ("narrow one", 1.0)
    ]


def test_overlong_ids_are_refused_before_any_sql() -> None:
    with pytest.raises(ValueError, match="user id is 129 characters long; the limit is 128"):
        Scope.for_user("acme", "u" * 129)


def test_a_paraphrase_on_the_same_subject_reinforces(
    pool: ConnectionPool[Any], scripted_llm: ScriptedOpenAI
) -> None:
    memory = memory_over(pool, scripted_llm)
    first = memory.remember(
        ANA, react("frontend uses React 16 today", 9, 0.6, "frontend_framework")
    )
    again = memory.remember(
        ANA, react("today frontend uses React 16", 1, 0.6, "frontend_framework")
    )
    assert again.action is RememberAction.REINFORCED
    assert again.fact.id == first.fact.id
