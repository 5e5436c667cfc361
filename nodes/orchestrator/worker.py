"""One sub-agent: a fresh message list, a budgeted brief, a few tool steps, a distilled result.

The worker's messages (its prompt, tool calls and observations) live only in this step's local
list and are gone when it returns: the orchestrator's state receives one `WorkerResult`, the
worker's private notes, and what it chose to post on the blackboard under its own prefix.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import psycopg
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.runtime import Runtime
from pydantic import BaseModel, Field, ValidationError

from nodes.orchestrator.plan import TASK_KEY
from recollect import Context, LongTermMemory, MemorySource, RecollectError, chat_model, context_of
from recollect.delegation.brief import BLACKBOARD_PREFIX, Recall, build_brief, memory_entries
from recollect.delegation.handoff import distill
from recollect.delegation.offline import offline_report
from recollect.delegation.records import Handoff, WorkerReport
from recollect.engine import (
    OFFLINE_MODEL,
    Recollection,
    Scope,
    message_tokens,
    resolve_model_name,
    truncate_text,
)
from state.orchestrator import SourcedFact, WorkerInput, WorkerResult

log = logging.getLogger(__name__)

WORKER_PROMPT = """You are one researcher on a larger task; other researchers handle the other \
parts. Work only on your subtask, from the material below (each line has an id in square \
brackets). Tools: `search_memory` looks up more of the user's long-term memory, `note` keeps a \
private note for your next subtask, `post` shares a value with the other researchers. When you \
are done, answer in two or three sentences."""

REPORT_PROMPT = """Report your result. Put every fact and number in `facts`, each citing the ids \
(from square brackets) it came from; a fact you cannot cite goes to `open_questions`."""


class search_memory(BaseModel):  # noqa: N801 - tool names are the class names
    """Search the user's long-term memory for more on your subtask."""

    query: str = Field(description="What to look for.")


class note(BaseModel):  # noqa: N801
    """Keep a private note; only you see it, on your next subtask."""

    key: str
    value: str


class post(BaseModel):  # noqa: N801
    """Share a value on the blackboard, where the orchestrator and other researchers see it."""

    key: str
    value: str


TOOLS: tuple[type[BaseModel], ...] = (search_memory, note, post)
MAX_NOTES = 8
MAX_POSTS = 4


def _engine(source: MemorySource) -> LongTermMemory | None:
    return source() if callable(source) else source


@dataclass
class Workspace:
    """The worker's private working state for one run: never checkpointed as it is built."""

    worker_id: str
    sources: dict[str, str]
    notes: dict[str, str]
    posts: dict[str, str] = field(default_factory=dict)
    searches: int = 0


class WorkerNode:
    """The `worker` node bound to a memory engine (None: no long-term memory)."""

    def __init__(self, source: MemorySource) -> None:
        self._source = source

    def __call__(self, state: WorkerInput, runtime: Runtime[Context]) -> dict[str, Any]:
        payload = state
        ctx = context_of(runtime)
        subtask = payload["subtask"]
        scope = Scope.for_user(ctx.org_id, ctx.user_id)
        memory = self._memory()
        brief = build_brief(
            subtask["task"],
            budget=ctx.per_worker_tokens,
            blackboard=payload["blackboard"],
            notes=payload["notes"],
            recall=self._recaller(memory, scope, subtask["task"]),
        )
        space = Workspace(subtask["id"], dict(brief.sources), dict(payload["notes"]))
        messages: list[BaseMessage] = [
            SystemMessage(content=f"{WORKER_PROMPT}\n\n{brief.render()}".strip()),
            HumanMessage(content=subtask["task"]),
        ]
        offline = resolve_model_name(ctx.model) == OFFLINE_MODEL
        model = chat_model(ctx.model)
        largest, steps, reply = message_tokens(messages), 0, AIMessage(content="")
        for steps in range(1, ctx.worker_max_steps + 1):  # noqa: B007 - the count is reported
            reply = _as_ai(model.bind_tools(list(TOOLS)).invoke(messages))
            messages.append(reply)
            if not reply.tool_calls:
                break
            for call in reply.tool_calls:
                observation = self._run_tool(call["name"], call["args"], space, memory, scope, ctx)
                messages.append(ToolMessage(content=observation, tool_call_id=call["id"] or ""))
            largest = max(largest, message_tokens(messages))
        report = (
            offline_report(brief, reply.text, skip=(f"{BLACKBOARD_PREFIX}{TASK_KEY}",))
            if offline
            else _report(model, messages)
        )
        handoff = distill(
            report, space.sources, max_tokens=ctx.handoff_tokens, fallback_summary=reply.text
        )
        return self._update(payload, handoff, space, max(largest, message_tokens(messages)), steps)

    def _memory(self) -> LongTermMemory | None:
        try:
            return _engine(self._source)
        except (psycopg.Error, RecollectError) as exc:
            log.warning("long-term memory unavailable (%s); the worker starts without it", exc)
            return None

    @staticmethod
    def _recaller(memory: LongTermMemory | None, scope: Scope, task: str) -> Recall | None:
        """The worker's own recall: its subtask is the query, the tokens left its cap."""
        if memory is None:
            return None

        def recall(budget: int) -> Recollection | None:
            try:
                return memory.recall(scope, task, token_budget=budget)
            except (psycopg.Error, RecollectError) as exc:
                log.warning("worker recall failed (%s); continuing without it", exc)
                return None

        return recall

    def _run_tool(
        self,
        name: str,
        args: dict[str, Any],
        space: Workspace,
        memory: LongTermMemory | None,
        scope: Scope,
        ctx: Context,
    ) -> str:
        """Run one tool call against the worker's own workspace; bad arguments are an answer,
        not a crash, so the model can correct itself."""
        try:
            if name == search_memory.__name__:
                return self._search(search_memory.model_validate(args), space, memory, scope, ctx)
            if name == note.__name__:
                entry = note.model_validate(args)
                if len(space.notes) >= MAX_NOTES and entry.key not in space.notes:
                    return f"not kept: at most {MAX_NOTES} notes"
                space.notes[entry.key] = truncate_text(entry.value, ctx.handoff_tokens // 4)
                return f"noted {entry.key}"
            if name == post.__name__:
                shared = post.model_validate(args)
                key = f"{space.worker_id}.{shared.key}"
                if len(space.posts) >= MAX_POSTS and key not in space.posts:
                    return f"not posted: at most {MAX_POSTS} posts"
                space.posts[key] = truncate_text(shared.value, ctx.handoff_tokens // 4)
                return f"posted {key}"
        except ValidationError as exc:
            return f"invalid arguments for {name}: {exc.error_count()} problem(s)"
        return f"unknown tool {name}"

    @staticmethod
    def _search(
        request: search_memory,
        space: Workspace,
        memory: LongTermMemory | None,
        scope: Scope,
        ctx: Context,
    ) -> str:
        if memory is None:
            return "no long-term memory is configured"
        space.searches += 1
        try:
            found = memory.recall(scope, request.query, token_budget=ctx.per_worker_tokens // 3)
        except (psycopg.Error, RecollectError) as exc:
            return f"search failed: {exc}"
        lines = []
        for n, (_, source, text) in enumerate(memory_entries(found), start=1):
            shown = f"s{space.searches}.{n}"
            space.sources[shown] = source
            lines.append(f"[{shown}] {text}")
        return "\n".join(lines) or "nothing found"

    @staticmethod
    def _update(
        payload: WorkerInput, handoff: Handoff, space: Workspace, tokens: int, steps: int
    ) -> dict[str, Any]:
        worker_id, round_ = space.worker_id, payload["round"]
        facts = [
            SourcedFact(
                round=round_,
                text=f.text,
                sources=list(f.sources),
                workers=[worker_id],
                learned=f.learned,
            )
            for f in handoff.facts
        ]
        result = WorkerResult(
            round=round_,
            worker_id=worker_id,
            task=payload["subtask"]["task"],
            summary=handoff.summary,
            facts=facts,
            open_questions=list(handoff.open_questions),
            context_tokens=tokens,
            steps=steps,
        )
        update: dict[str, Any] = {
            "results": [result],
            "facts": facts,
            "notes": {worker_id: space.notes},
            "context_tokens": {f"worker:{worker_id}": tokens},
        }
        if space.posts:
            update["blackboard"] = space.posts
        return update


def _as_ai(message: BaseMessage) -> AIMessage:
    return message if isinstance(message, AIMessage) else AIMessage(content=message.text)


def _report(model: BaseChatModel, messages: list[BaseMessage]) -> WorkerReport:
    """The forced structured report; a malformed one becomes an empty report, whose summary
    falls back to the worker's last reply."""
    asking = [*messages, HumanMessage(content=REPORT_PROMPT)]
    reply = model.bind_tools([WorkerReport], tool_choice=WorkerReport.__name__).invoke(asking)
    calls = [c for c in getattr(reply, "tool_calls", []) if c["name"] == WorkerReport.__name__]
    if not calls:
        return WorkerReport(summary="")
    try:
        return WorkerReport.model_validate(calls[0]["args"])
    except ValidationError:
        log.warning("a worker's report did not match the schema; keeping its last reply")
        return WorkerReport(summary="")
