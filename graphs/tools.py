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

from langchain_core.tools import BaseTool, tool
from langgraph.prebuilt import ToolNode, ToolRuntime

from graphs.approvals import process_approvals
from nodes.context import context_of
from recollect.approvals.errors import WorkflowNotFoundError
from recollect.store.errors import RecollectError
from state.context import Context


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
