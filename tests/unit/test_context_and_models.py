"""Configuration: environment defaults, run-time values, and which model is chosen."""

from __future__ import annotations

import pytest

from recollect.models.factory import (
    DEFAULT_OPENAI_MODEL,
    OFFLINE_MODEL,
    describe_model,
    resolve_model_name,
)
from recollect.state.context import Context
from recollect.store.server import configured_uri, redact_password, with_database


def test_context_defaults_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECOLLECT_USER_ID", "env-user")
    monkeypatch.setenv("RECOLLECT_MAX_HISTORY_TOKENS", "1234")
    ctx = Context()
    assert ctx.user_id == "env-user"
    assert ctx.max_history_tokens == 1234


def test_run_time_values_win_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECOLLECT_USER_ID", "env-user")
    assert Context(user_id="runtime-user").user_id == "runtime-user"


def test_a_malformed_number_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECOLLECT_CONTEXT_TOKENS", "lots")
    with pytest.raises(ValueError, match="RECOLLECT_CONTEXT_TOKENS"):
        Context()


def test_orchestrator_budgets_default_and_refuse_what_cannot_work(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("PER_WORKER_TOKENS", "HANDOFF_TOKENS", "MAX_WORKERS", "WORKER_MAX_STEPS"):
        monkeypatch.delenv(f"RECOLLECT_{name}", raising=False)
    ctx = Context()
    assert (ctx.per_worker_tokens, ctx.handoff_tokens, ctx.max_workers) == (1500, 400, 8)
    assert ctx.worker_max_steps == 4
    monkeypatch.setenv("RECOLLECT_PER_WORKER_TOKENS", "900")
    assert Context().per_worker_tokens == 900
    for field, value in (("per_worker_tokens", 0), ("max_workers", -1), ("handoff_tokens", 7)):
        with pytest.raises(ValueError, match=f"Context.{field}"):
            Context(**{field: value})  # type: ignore[arg-type]


def test_offline_without_key_or_url() -> None:
    assert resolve_model_name() == OFFLINE_MODEL
    assert "offline" in describe_model()
    assert "OPENAI_API_KEY" in describe_model()


@pytest.mark.parametrize("variable", ["OPENAI_API_KEY", "OPENAI_BASE_URL"])
def test_either_openai_variable_selects_the_default_model(
    variable: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(variable, "http://127.0.0.1:9/v1")
    assert resolve_model_name() == DEFAULT_OPENAI_MODEL
    assert resolve_model_name("openai:other") == "openai:other"


def test_database_uri_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    assert configured_uri() is None
    monkeypatch.setenv("DATABASE_URI", ":memory:")  # what `langgraph dev` sets
    assert configured_uri() is None
    monkeypatch.setenv("POSTGRES_URI", "postgresql://platform/db")
    assert configured_uri() == "postgresql://platform/db"
    monkeypatch.setenv("RECOLLECT_DATABASE_URI", "postgresql://mine/db")
    assert configured_uri() == "postgresql://mine/db"


def test_uri_helpers() -> None:
    assert redact_password("postgresql://u:pw@h:5432/d") == "postgresql://u:***@h:5432/d"
    assert redact_password("postgresql://u@h/d") == "postgresql://u@h/d"
    assert with_database("postgresql://u@/a?host=/run/pg", "b") == "postgresql://u@/b?host=/run/pg"
