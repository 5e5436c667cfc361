"""The approval, orchestrator and memory graphs hand every step the run's settings as the
graph's own `Context` class (a fork's subclass, with its defaults), whatever a run sends:
nothing, a dict, or the template's `Context`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import pytest
from psycopg_pool import ConnectionPool

import nodes.approval.draft
import nodes.approval.review
import nodes.memory_job
import nodes.orchestrator.plan
import nodes.orchestrator.remember
import nodes.orchestrator.synthesise
import nodes.orchestrator.worker
from graphs import approval, memory, orchestrator
from recollect import thread_config
from recollect.history.owned_checkpoints import ScopedPostgresSaver
from recollect.state.context import Context
from state.approval import ApprovalContext
from state.memory import MemoryContext
from state.orchestrator import OrchestratorContext
from tests.support.scripted_openai import JsonDict, Reply, ScriptedOpenAI

SENT: list[Context | dict[str, Any] | None] = [None, {}, Context()]
SENT_IDS = ["nothing", "a dict", "the template's Context"]


@dataclass(kw_only=True)
class DeskApproval(ApprovalContext):
    desk: str = "refunds-eu"


@dataclass(kw_only=True)
class DeskOrchestrator(OrchestratorContext):
    desk: str = "offsites"


@dataclass(kw_only=True)
class DeskMemory(MemoryContext):
    desk: str = "archive"


@contextmanager
def settings_seen(*modules: ModuleType) -> Iterator[list[tuple[str, Context]]]:
    """The settings each step read, around the real `context_of` of each module."""
    seen: list[tuple[str, Context]] = []
    with pytest.MonkeyPatch.context() as patch:
        for module in modules:

            def recorded(runtime: Any, name: str = module.__name__, real: Any = module.context_of):
                ctx: Context = real(runtime)
                seen.append((name, ctx))
                return ctx

            patch.setattr(module, "context_of", recorded)
        yield seen


def desks(seen: list[tuple[str, Context]]) -> set[tuple[str, str, str]]:
    return {(name, type(ctx).__name__, getattr(ctx, "desk", "none")) for name, ctx in seen}


@pytest.mark.parametrize("sent", SENT, ids=SENT_IDS)
def test_approval_steps_read_the_forks_settings(
    sent: Context | dict[str, Any] | None, checkpointer: ScopedPostgresSaver
) -> None:
    graph = approval.build(DeskApproval).compile(checkpointer=checkpointer)
    readers = (nodes.approval.draft, nodes.approval.review)
    request = {"order_id": "77-A", "amount": "12.00", "reason": "damaged"}
    with settings_seen(*readers) as seen:
        config = thread_config(f"approval-desk-{type(sent).__name__}")
        graph.invoke({"request": request}, config, context=sent)  # waits at the review gate
    assert desks(seen) == {(m.__name__, "DeskApproval", "refunds-eu") for m in readers}


def plan_and_report(request: JsonDict) -> Reply:
    """One subtask; the worker answers at once and reports; the synthesis is plain text."""
    tools = [(t.get("function") or {}).get("name") for t in request.get("tools") or []]
    if "Plan" in tools:
        return Reply(json=json.dumps({"subtasks": [{"task": "Find a venue", "keys": []}]}))
    if "WorkerReport" in tools:
        report = {"summary": "a venue", "facts": [], "open_questions": []}
        return Reply(json=json.dumps(report))
    return Reply(text="done")


@pytest.mark.parametrize("sent", SENT, ids=SENT_IDS)
def test_orchestrator_steps_read_the_forks_settings(
    sent: Context | dict[str, Any] | None, pool: ConnectionPool[Any], scripted_llm: ScriptedOpenAI
) -> None:
    scripted_llm.set_default(plan_and_report)
    graph = orchestrator.build(None, DeskOrchestrator).compile()
    readers = (
        nodes.orchestrator.plan,
        nodes.orchestrator.worker,
        nodes.orchestrator.synthesise,
        nodes.orchestrator.remember,
    )
    with settings_seen(*readers) as seen:
        out = graph.invoke({"task": "Plan the offsite"}, thread_config("orch-desk"), context=sent)
    assert out["answer"] == "done"
    assert desks(seen) == {(m.__name__, "DeskOrchestrator", "offsites") for m in readers}


@pytest.mark.parametrize("sent", SENT, ids=SENT_IDS)
def test_the_memory_job_reads_the_forks_settings(
    sent: Context | dict[str, Any] | None, pool: ConnectionPool[Any]
) -> None:
    graph = memory.build(DeskMemory).compile()
    with settings_seen(nodes.memory_job) as seen:
        out = graph.invoke({"thread_id": "nothing-queued"}, context=sent)
    assert out["outcomes"] == []
    assert desks(seen) == {("nodes.memory_job", "DeskMemory", "archive")}
