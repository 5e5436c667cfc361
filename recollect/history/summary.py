"""The incremental fold: extend a running summary with the messages that left the window.

Only those messages and the previous summary are sent, so a fold costs the same at turn 300
as at turn 30. The summary's size is enforced twice: the model is called with `max_tokens`,
and whatever comes back is cut hard at the cap (some servers ignore `max_tokens`).
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from recollect.history.truncation import CHARS_PER_TOKEN, text_tokens, truncate_text
from recollect.history.window import message_tokens

FOLD_INSTRUCTIONS = (
    "You maintain the running summary of a conversation between a user and an assistant. "
    "Extend the current summary with the new messages and reply with the updated summary only. "
    "Keep the user's goals, decisions made, stated preferences and open questions or unresolved "
    "problems. Drop greetings, pleasantries and thanks, and keep only the conclusion of any "
    "tool output. Exact values (ids, emails, amounts, dates, explicit constraints) are stored "
    "separately and need not be repeated. Use at most {words} words."
)
TOOL_RESULT_TOKENS_IN_FOLD = 150
"""Verbose tool output is reduced to its head and tail before the model reads it."""
MESSAGE_TOKENS_IN_FOLD = 600


def fold_due(pending: Sequence[BaseMessage], max_history_tokens: int) -> bool:
    """Whether enough has left the window to be worth a model call.

    The threshold adapts to message size: four average messages, but never less than a tenth
    or more than half of the history budget. Small chit-chat folds every few turns; a large
    tool result folds at once.
    """
    if not pending:
        return False
    tokens = message_tokens(pending)
    average = tokens / len(pending)
    threshold = min(max(4 * average, max_history_tokens / 10), max_history_tokens / 2)
    return tokens >= threshold


def fold_prompt(summary: str, pending: Sequence[BaseMessage], max_tokens: int) -> list[BaseMessage]:
    """The two messages of a fold: instructions, then the old summary and the new messages."""
    words = max(int(max_tokens * 0.7), 10)
    lines = [render_for_fold(m) for m in pending]
    body = f"Current summary:\n{summary or '(none yet)'}\n\nNew messages to fold in:\n" + "\n".join(
        line for line in lines if line
    )
    return [
        SystemMessage(content=FOLD_INSTRUCTIONS.format(words=words)),
        HumanMessage(content=body),
    ]


def render_for_fold(message: BaseMessage) -> str:
    """One line per message; tool output cut to head and tail."""
    text = str(message.text)
    if isinstance(message, ToolMessage):
        name = message.name or "tool"
        return f"Tool result ({name}): {truncate_text(text, TOOL_RESULT_TOKENS_IN_FOLD)}"
    text = truncate_text(text, MESSAGE_TOKENS_IN_FOLD)
    if isinstance(message, HumanMessage):
        return f"User: {text}"
    if isinstance(message, AIMessage):
        calls = ", ".join(call["name"] for call in message.tool_calls)
        called = f" [called {calls}]" if calls else ""
        return f"Assistant{called}: {text}" if text or called else ""
    return f"{message.type.capitalize()}: {text}"


def cap_summary(text: str, max_tokens: int) -> str:
    """The summary cut at the cap, on a word boundary, whatever the model returned."""
    text = text.strip()
    if text_tokens(text) <= max_tokens:
        return text
    limit = max_tokens * CHARS_PER_TOKEN - 1
    cut = text[:limit]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip() + "…"


def extractive_fold(summary: str, pending: Sequence[BaseMessage], max_tokens: int) -> str:
    """A model-free fold for the offline model: the user's own words, newest kept at the cap.

    The offline stand-in cannot summarise; this keeps the demo and offline runs honest by
    folding what the user said (assistant and tool text dropped) and cutting to the cap.
    """
    said = [truncate_text(str(m.text), 60) for m in pending if isinstance(m, HumanMessage)]
    lines = [line for line in summary.splitlines() if line.strip()]
    lines += [f"- user: {' '.join(text.split())}" for text in said]
    while lines and text_tokens("\n".join(lines)) > max_tokens:
        lines.pop(0)
    return "\n".join(lines)
