"""The incremental fold: extend a running summary with the messages that left the window.

Only those messages and the previous summary are sent, so a fold costs the same at turn 300
as at turn 30. The summary's size is enforced twice: the model is called with `max_tokens`,
and whatever comes back is cut hard at the cap (some servers ignore `max_tokens`).

No secret reaches the fold or the summary: every message is rendered with `mask_secrets`, the
previous summary is masked again before it is sent, and so is whatever the model returns
(`cap_summary`), so a credential the user said is `[SECRET]` in the prompt and the state.
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

from recollect.gate import mask_secrets
from recollect.history.content import EXCERPT_KEY
from recollect.history.tokens import text_tokens
from recollect.history.truncation import truncate_text
from recollect.history.window import message_tokens

FOLD_INSTRUCTIONS = (
    "You maintain the running summary of a conversation between a user and an assistant. "
    "Extend the current summary with the new messages and reply with the updated summary only. "
    "Keep the user's goals, decisions made, stated preferences and open questions or unresolved "
    "problems. Drop greetings, pleasantries and thanks, and keep only the conclusion of any "
    "tool output. Copy exact values (ids, order numbers, emails, amounts, dates, explicit "
    "constraints) word for word; never paraphrase or drop one. Use at most {words} words."
)
MAX_FOLD_FAILURES = 3
"""Failed model folds in a row before the fold falls back to `extractive_fold`."""
FOLD_BATCH_TOKENS = 2400
"""Rendered messages per fold request, so a fold request stays small whatever is pending."""
MAX_FOLD_CALLS = 4
"""Fold requests per turn; anything still pending waits for the next turn (or the cap)."""
UNFOLDED_BUDGETS = 2
"""`unfolded` may hold this many history budgets; beyond it the oldest fold extractively."""
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
    summary = mask_secrets(summary)
    body = f"Current summary:\n{summary or '(none yet)'}\n\nNew messages to fold in:\n" + "\n".join(
        line for line in lines if line
    )
    return [
        SystemMessage(content=FOLD_INSTRUCTIONS.format(words=words)),
        HumanMessage(content=body),
    ]


def fold_batches(pending: Sequence[BaseMessage]) -> list[list[BaseMessage]]:
    """`pending` in order, split so each fold request renders at most `FOLD_BATCH_TOKENS`."""
    batches: list[list[BaseMessage]] = []
    used = FOLD_BATCH_TOKENS
    for message in pending:
        cost = text_tokens(render_for_fold(message)) + 1
        if used + cost > FOLD_BATCH_TOKENS and (not batches or batches[-1]):
            batches.append([])
            used = 0
        batches[-1].append(message)
        used += cost
    return [batch for batch in batches if batch]


def over_cap(pending: Sequence[BaseMessage], max_history_tokens: int) -> list[BaseMessage]:
    """The oldest pending messages beyond `UNFOLDED_BUDGETS` history budgets."""
    room = UNFOLDED_BUDGETS * max_history_tokens
    kept_tokens = 0
    for index in range(len(pending) - 1, -1, -1):
        kept_tokens += message_tokens([pending[index]])
        if kept_tokens > room:
            return list(pending[: index + 1])
    return []


def render_for_fold(message: BaseMessage) -> str:
    """One line per message, secrets masked; tool output cut to head and tail; cut middles
    marked."""
    text = mask_secrets(str(message.text))
    if message.additional_kwargs.get(EXCERPT_KEY):
        if isinstance(message, SystemMessage):
            return f"Note: {text}"
        who = {"human": "user", "ai": "assistant", "tool": "tool"}.get(message.type, "a")
        return f"Excerpt (from the middle of a long {who} message): {text}"
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
    """The summary within the cap, whatever the model returned, secrets masked: the oldest part
    goes (a summary grows at its end, so the end is the newest), cut on a word boundary."""
    text = mask_secrets(text.strip())
    if text_tokens(text) <= max_tokens:
        return text
    keep = max(int(len(text) * (max_tokens - 1) / text_tokens(text)), 1)
    while True:
        cut = text[len(text) - keep :]
        space = cut.find(" ")
        if 0 <= space < len(cut) // 2:
            cut = cut[space + 1 :]
        capped = "…" + cut.lstrip()
        if text_tokens(capped) <= max_tokens or keep <= 1:
            return capped
        keep = keep * 9 // 10


def extractive_fold(summary: str, pending: Sequence[BaseMessage], max_tokens: int) -> str:
    """A model-free fold: the user's own words and the unpin notes, newest kept at the cap.

    The offline stand-in cannot summarise, and a summariser that keeps failing must not let
    `unfolded` grow without bound; this folds what the user said (assistant and tool text
    dropped) and cuts to the cap.
    """
    said = [
        f"- user: {' '.join(truncate_text(mask_secrets(str(m.text)), 60).split())}"
        for m in pending
        if isinstance(m, HumanMessage)
    ]
    notes = [
        f"- {' '.join(truncate_text(mask_secrets(str(m.text)), 120).split())}"
        for m in pending
        if isinstance(m, SystemMessage) and m.additional_kwargs.get(EXCERPT_KEY)
    ]
    lines = [line for line in mask_secrets(summary).splitlines() if line.strip()]
    lines += notes + said
    while lines and text_tokens("\n".join(lines)) > max_tokens:
        lines.pop(0)
    return "\n".join(lines)
