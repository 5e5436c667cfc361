"""The verbatim window: which messages a bounded history keeps, and how an oversized one fits.

`trim_messages` picks the newest messages within a token budget, but it can keep a
`ToolMessage` whose `AIMessage` it dropped, or an `AIMessage` whose tool results it dropped
(langchain-core issue #33245); providers reject both. `kept_messages` repairs that after it and
guarantees the invariants the property tests check: the leading system message is never
dropped, tool calls and their results are kept or dropped together, the kept tail starts on a
human message, and the budget holds unless the newest turn alone exceeds it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    ToolMessage,
    trim_messages,
)
from langchain_core.messages.utils import count_tokens_approximately

from recollect.history.truncation import truncate_text

MIN_MESSAGE_TOKENS = 32
"""No message is cut below this: a marker and a little of each end must fit."""


def message_tokens(messages: Sequence[BaseMessage]) -> int:
    """The one token counter used for every budget (no downloads, same as LangChain's)."""
    return count_tokens_approximately(messages) if messages else 0


def kept_messages(messages: Sequence[BaseMessage], max_tokens: int) -> list[BaseMessage]:
    """The system message (if first) plus the newest whole turns within `max_tokens`.

    When even the newest turn (from the last human message on) exceeds the budget it is kept
    whole anyway; `fit_window` then truncates its largest messages.
    """
    if not messages:
        return []
    system = [messages[0]] if messages[0].type == "system" else []
    body = list(messages[len(system) :])
    budget = max(max_tokens - message_tokens(system), 0)
    kept: list[BaseMessage] = trim_messages(
        body,
        max_tokens=budget,
        token_counter=count_tokens_approximately,
        strategy="last",
        start_on="human",
        allow_partial=False,
    )
    kept = repair_tool_pairs(kept)
    if not kept:
        last_human = max(
            (i for i, m in enumerate(body) if isinstance(m, HumanMessage)), default=None
        )
        if last_human is not None:
            kept = repair_tool_pairs(body[last_human:])
    return system + kept


def repair_tool_pairs(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """Drop orphaned tool results and tool calls missing a result; start on a human message."""
    kept = list(messages)
    while True:
        call_ids = {call["id"] for m in kept if isinstance(m, AIMessage) for call in m.tool_calls}
        result_ids = {m.tool_call_id for m in kept if isinstance(m, ToolMessage)}
        repaired = [
            m
            for m in kept
            if not (isinstance(m, ToolMessage) and m.tool_call_id not in call_ids)
            and not (
                isinstance(m, AIMessage)
                and m.tool_calls
                and any(call["id"] not in result_ids for call in m.tool_calls)
            )
        ]
        start = next((i for i, m in enumerate(repaired) if isinstance(m, HumanMessage)), None)
        repaired = [] if start is None else repaired[start:]
        if len(repaired) == len(kept):
            return repaired
        kept = repaired


@dataclass(frozen=True)
class Window:
    """The outcome of fitting a history to a budget."""

    kept: list[BaseMessage]
    """Messages to keep, oversized ones already truncated (same ids)."""
    dropped: list[BaseMessage]
    """Messages that leave the window, oldest first (oversized ones truncated)."""
    truncated_ids: list[str]
    """Ids of the messages whose content was cut."""


def fit_window(messages: Sequence[BaseMessage], max_tokens: int) -> Window:
    """Choose the window, then cut oversized messages so nothing kept exceeds the budget."""
    kept = kept_messages(messages, max_tokens)
    kept_ids = {id(m) for m in kept}
    dropped = [m for m in messages if id(m) not in kept_ids]
    truncated: list[str] = []
    fitted = _fit(kept, max_tokens, truncated)
    # A message leaving the window alone larger than the whole budget is cut too, so that
    # nothing in the checkpoint is bigger than the history budget while it waits to be folded.
    dropped = [_cut(m, max_tokens, truncated) for m in dropped]
    return Window(kept=fitted, dropped=dropped, truncated_ids=truncated)


def _fit(kept: list[BaseMessage], max_tokens: int, truncated: list[str]) -> list[BaseMessage]:
    """Water-fill: find the largest per-message cap under which the window fits, cut above it."""
    total = message_tokens(kept)
    if total <= max_tokens:
        return kept
    system = [m for m in kept[:1] if m.type == "system"]
    body = kept[len(system) :]
    room = max(max_tokens - message_tokens(system), 0)
    sizes = [message_tokens([m]) for m in body]
    low, high = MIN_MESSAGE_TOKENS, max(sizes, default=MIN_MESSAGE_TOKENS)
    while low < high:
        cap = (low + high + 1) // 2
        if sum(min(size, cap) for size in sizes) <= room:
            low = cap
        else:
            high = cap - 1
    return system + [
        _cut(m, low, truncated) if size > low else m for m, size in zip(body, sizes, strict=True)
    ]


def _cut(message: BaseMessage, max_tokens: int, truncated: list[str]) -> BaseMessage:
    """The message with its text content cut to fit `max_tokens`, id unchanged."""
    if not isinstance(message.content, str) or message_tokens([message]) <= max_tokens:
        return message
    fixed = message_tokens([message.model_copy(update={"content": ""})])
    target = max(max_tokens - fixed, MIN_MESSAGE_TOKENS)
    content = truncate_text(message.content, target)
    if content == message.content:
        return message
    if message.id:
        truncated.append(message.id)
    return message.model_copy(update={"content": content})
