"""Break the task into subtasks, one per worker, and start a new round.

A real model plans through a forced structured answer; the offline model (or a plan with no
subtasks) falls back to splitting the task into its lines, bullets or sentences.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.runtime import Runtime
from pydantic import BaseModel, Field, ValidationError

from recollect import Context, chat_model, context_of
from recollect.delegation.brief import check_blackboard
from recollect.delegation.plan import split_task
from recollect.engine import OFFLINE_MODEL, message_tokens, resolve_model_name
from state.orchestrator import OrchestratorState, Subtask

PLAN_PROMPT = """Split the user's task into at most {limit} independent subtasks, each one a \
self-contained instruction a researcher can carry out alone. For each, list the blackboard keys \
it needs (only from: {keys}); an empty list means all of them."""

TASK_KEY = "task"
"""The blackboard key every worker can read: the whole task, so no worker loses the goal."""


class PlannedSubtask(BaseModel):
    """One subtask in the model's plan."""

    task: str = Field(description="What this worker must find out or produce.")
    keys: list[str] = Field(default_factory=list, description="Blackboard keys it needs.")


class Plan(BaseModel):
    """The model's plan: the subtasks, in order."""

    subtasks: list[PlannedSubtask] = Field(default_factory=list)


class EmptyTaskError(ValueError):
    """The orchestrator was given nothing to do."""


def shared_keys(blackboard: dict[str, str]) -> list[str]:
    """The keys every worker may read: the caller's, not the ones workers posted (`w1.x`)."""
    return [key for key in blackboard if "." not in key]


def plan(state: OrchestratorState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Subtasks for this round, each with the blackboard keys it may read."""
    ctx = context_of(runtime)
    task = (state.get("task") or "").strip()
    if not task:
        raise EmptyTaskError("the orchestrator needs a non-empty `task`")
    check_blackboard(state.get("blackboard") or {}, ctx.per_worker_tokens)
    board = {**(state.get("blackboard") or {}), TASK_KEY: task}
    keys = shared_keys(board)
    messages = [
        SystemMessage(content=PLAN_PROMPT.format(limit=ctx.max_workers, keys=", ".join(keys))),
        HumanMessage(content=task),
    ]
    planned: list[PlannedSubtask] = []
    if resolve_model_name(ctx.model) != OFFLINE_MODEL:
        reply = chat_model(ctx.model).bind_tools([Plan], tool_choice=Plan.__name__).invoke(messages)
        calls = [c for c in getattr(reply, "tool_calls", []) if c["name"] == Plan.__name__]
        try:
            planned = Plan.model_validate(calls[0]["args"]).subtasks if calls else []
        except ValidationError:
            planned = []
    planned = [p for p in planned if p.task.strip()][: ctx.max_workers]
    if not planned:
        planned = [PlannedSubtask(task=t) for t in split_task(task, ctx.max_workers)]
    subtasks = [
        Subtask(
            id=f"w{n}",
            task=p.task.strip(),
            keys=list(dict.fromkeys([TASK_KEY, *[k for k in p.keys if k in keys]]))
            if p.keys
            else keys,
        )
        for n, p in enumerate(planned, start=1)
    ]
    return {
        "round": state.get("round", 0) + 1,
        "subtasks": subtasks,
        "blackboard": {TASK_KEY: task},
        "context_tokens": {"orchestrator.plan": message_tokens(messages)},
    }
