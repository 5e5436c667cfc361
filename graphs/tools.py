"""The agent's tools. `AGENT_TOOLS` is the one list both `call_model` (to bind) and the
`tools` node (to run) use, so adding a tool is one line here.

`request_refund` starts a real approval workflow: it runs the approval graph to its review
gate under the workflow's own thread (`approval-<id>`), with the owner (org, user) taken from
the conversation's run context. It reaches the database through the process's shared pool
(`recollect.store.pool`): the CLI installs its own pool there, and under `langgraph
dev` or the platform the pool is opened on first use against the same Postgres that
`platform_checkpointer` uses. We start the workflow directly, rather than leaving a request row
for something else to pick up, so that when the tool answers "pending" the workflow is already
checkpointed and waiting for a reviewer — there is no window in which it exists only as a row.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import psycopg
from langchain_core.tools import BaseTool, tool
from langgraph.prebuilt import ToolNode, ToolRuntime

from graphs.approvals import process_approvals
from recollect import Context, LongTermMemory, MemorySource, RecollectError, context_of
from recollect.approvals.errors import WorkflowNotFoundError
from recollect.engine import Scope, forget_now, remember_now

SEARCH_LIMIT = 8


@tool
def request_refund(order_id: str, amount: float, reason: str, runtime: ToolRuntime[Context]) -> str:
    """Ask for a refund on the user's order. A manager must approve it before money moves;
    the request is pending until then.

    Args:
        order_id: the order to refund, as the user wrote it (e.g. "8842-B").
        amount: how much to refund, in the order's currency (e.g. 249.00).
        reason: why, in the user's words.
    """
    ctx = context_of(runtime)
    thread = (runtime.config.get("configurable") or {}).get("thread_id")
    try:
        view = process_approvals().request(
            org_id=ctx.org_id,
            user_id=ctx.user_id,
            order_id=order_id,
            amount=str(amount),
            reason=reason,
            origin_thread_id=str(thread) if thread else None,
        )
    except RecollectError as exc:
        return f"The refund request was not filed: {exc}"
    request = view.workflow.request
    if view.reused:
        return (
            f"Refund request {view.id} for order {request['order_id']} already exists and is "
            f"{view.state.value}; no second request was filed."
        )
    return (
        f"Refund request {view.id} for order {request['order_id']} "
        f"({request['amount']} {request['currency']}) is pending: it is "
        f"{view.state.value} and waits for a manager's approval. Nothing has been paid yet."
    )


@tool
def refund_status(request_id: str, runtime: ToolRuntime[Context]) -> str:
    """Look up one of the user's refund requests by its id.

    Args:
        request_id: the id `request_refund` returned.
    """
    ctx = context_of(runtime)
    try:
        view = process_approvals().show(
            request_id, org_id=ctx.org_id, viewer=ctx.user_id, permissions=ctx.permissions
        )
    except WorkflowNotFoundError:
        return f"no refund request {request_id!r} of yours was found"
    except RecollectError as exc:
        return str(exc)
    if view.workflow.user_id != ctx.user_id:
        return f"no refund request {request_id!r} of yours was found"
    record = view.workflow
    decided = (
        f"; {record.decision.past} by {record.decided_by}" if record.decision is not None else ""
    )
    paid = f"; refund {view.refunds[0].id} paid" if view.refunds else ""
    return f"Refund request {record.id} is {view.state.value}{decided}{paid}."


AGENT_TOOLS: list[BaseTool] = [request_refund, refund_status]

MAX_TOOL_ERROR_CHARS = 300
"""A tool's error reaches the model as one short line, not a traceback."""


def tool_error(exc: Exception) -> str:
    """The `ToolMessage` text for a tool that raised: the run goes on, and the model can tell
    the user what failed instead of the whole turn (and the thread) failing with it."""
    detail = " ".join(str(exc).split()) or "no detail"
    line = f"Error: the tool failed ({type(exc).__name__}: {detail})"
    if len(line) > MAX_TOOL_ERROR_CHARS:
        line = line[: MAX_TOOL_ERROR_CHARS - 1] + "…"
    return line + ". It may not have completed: tell the user, and do not retry blindly."


def tool_node(tools: Sequence[BaseTool] = AGENT_TOOLS) -> ToolNode:
    """The `tools` step: every exception a tool raises comes back to the model as an error
    result (bad arguments included), so one failure never leaves a call without a result."""
    return ToolNode(list(tools), handle_tool_errors=tool_error)


def _moment(text: str | None) -> datetime | None:
    """An ISO date or time; a date without a zone is read as UTC."""
    if not text or not text.strip():
        return None
    moment = datetime.fromisoformat(text.strip())
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def memory_tools(source: MemorySource) -> list[BaseTool]:
    """`search_memory`, `remember` and `forget_memory` over the graph's long-term memory (the
    pattern where the agent manages its own memory); none without one. Every call is scoped to
    the conversation's user, and `remember` goes through extraction's screening and redaction."""
    if source is None:
        return []

    def engine() -> LongTermMemory | None:
        return source() if callable(source) else source

    def user(runtime: ToolRuntime[Context]) -> Scope:
        ctx = context_of(runtime)
        return Scope.for_user(ctx.org_id, ctx.user_id)

    @tool
    def search_memory(query: str, runtime: ToolRuntime[Context], as_of: str | None = None) -> str:
        """Search what is remembered about the user, best first, each with its id and date.

        Args:
            query: what to look for, in the user's words.
            as_of: an ISO date (e.g. "2025-06-01") to see what was true then instead of now.
        """
        memory = engine()
        if memory is None:
            return "Long-term memory is not available."
        try:
            found = memory.recall(
                user(runtime), query, k=SEARCH_LIMIT, as_of=_moment(as_of), repeat_profile=True
            )
        except ValueError as exc:
            return f"The search was not run: {exc}"
        except (psycopg.Error, RecollectError) as exc:
            return f"Memory is unavailable right now: {exc}"
        if not found.facts:
            return "Nothing remembered matches."
        return "\n".join(
            f"- [{r.fact.id}] ({r.fact.learned_at:%Y-%m-%d}) {r.fact.text}" for r in found.facts
        )

    @tool
    def remember(text: str, category: str, runtime: ToolRuntime[Context]) -> str:
        """Keep a durable fact about the user for future conversations.

        Args:
            text: the fact as a short third-person statement (e.g. "Allergic to peanuts").
            category: preference, biographical, constraint, goal or technical_stack.
        """
        memory = engine()
        if memory is None:
            return "Long-term memory is not available."
        try:
            kept = remember_now(memory, user(runtime), text, category)
        except (psycopg.Error, RecollectError) as exc:
            return f"Not remembered: memory is unavailable right now ({exc})."
        if not kept.stored:
            return f"Not remembered: {'; '.join(kept.reasons)}."
        return f"Remembered [{kept.fact_id}]: {kept.text}"

    @tool
    def forget_memory(id: str, runtime: ToolRuntime[Context]) -> str:
        """Forget one remembered fact of the user by the id `search_memory` showed.

        Args:
            id: the fact's id, as shown in square brackets.
        """
        memory = engine()
        if memory is None:
            return "Long-term memory is not available."
        try:
            forgotten = forget_now(memory, user(runtime), id)
        except (psycopg.Error, RecollectError) as exc:
            return f"Nothing was forgotten: memory is unavailable right now ({exc})."
        if not forgotten:
            return f"No remembered fact {id!r} of this user was found."
        return f"Forgotten: {id}."

    return [search_memory, remember, forget_memory]
