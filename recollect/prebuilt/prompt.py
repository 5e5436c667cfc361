"""Assemble what the model sees within `Context.context_tokens`, category by category.

Laid out by how often each part changes, so consecutive requests share a long prefix that
providers bill at a fraction of the price: the system message first (instructions, the
graph's own sections, then the profile, pinned values and summary, which change only when the
history is cut and folded), then the verbatim history, which only grows between cuts, and
last, right after the newest user message, this turn's recalled memories. Memory sections are
`## Heading` blocks, so any model, and the offline one, can tell memory from instructions; the
profile and the recalled memories each sit inside a `<memory>` block as quoted values
(`memory_block`) under the sentence saying they are data, so a remembered sentence is never
obeyed. A pinned value still said verbatim in the history is not repeated in the pinned
section until it leaves the history. Each category has a share of the budget and is cut its
own way when it overflows: pinned values keep constraints and the newest values, recalled
memories drop the lowest-ranked whole items, the summary is cut hard, tool results keep head
and tail (JSON stays valid), and the history drops its oldest whole turns. The history gets
whatever the other categories leave, so a short summary means more verbatim turns.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage, ToolMessage

from recollect.history.content import cut_content
from recollect.history.pinning import INSTRUCTION_KINDS
from recollect.history.records import PinnedValue
from recollect.history.summary import cap_summary
from recollect.history.tokens import text_tokens
from recollect.history.window import MIN_MESSAGE_TOKENS, fit_window, message_tokens, valid_history
from recollect.prebuilt.memory_block import MEMORY_IS_DATA, RECALLED_KEY, memory_block, quoted
from recollect.state.agent_state import AgentState
from recollect.state.context import Context
from recollect.state.memory_state import RecalledItem


@dataclass(frozen=True)
class BudgetShares:
    """Each category's share of `Context.context_tokens`; the history gets the remainder."""

    pinned: float = 0.10
    recalled: float = 0.15
    summary: float = 0.10
    tool_results: float = 0.25


SHARES = BudgetShares()
CITE_RECALLED = (
    "Each recalled memory ends with its id, like [m:1a2b3c4d]; when you use one, name its id."
)
"""Asked only when memories are recalled; the ids let traces count which ones a reply used."""


@dataclass(frozen=True)
class PromptSection:
    """A `## heading` block of a graph's own in the system message, rendered from the state
    (any field a fork adds to it) and the run's context; an empty body leaves it out. It has
    no budget share: its tokens come out of what the history may use."""

    heading: str
    render: Callable[[Any, Context], str]


@dataclass(frozen=True)
class Prompt:
    """The messages to send and the tokens each category used (plus what was cut)."""

    messages: list[BaseMessage]
    tokens: dict[str, int]
    shown: dict[str, Any] = field(default_factory=dict)
    """What made it in and what each category could have had: `budgets`, the recalled ids
    shown, pins shown and hidden, the summary text and the history ids (for traces)."""
    recalled_shown: dict[str, str] = field(default_factory=dict)
    """The recalled lines shown after each user message still in the history, by its id."""


def build_prompt(
    state: AgentState,
    ctx: Context,
    shares: BudgetShares = SHARES,
    own_sections: Sequence[PromptSection] = (),
) -> Prompt:
    """The system message (instructions, the graph's own sections, the profile, pinned values
    and summary), the verbatim history that fits, and this turn's recalled memories in a
    message just before the newest user message."""
    budget = ctx.context_tokens
    history: list[BaseMessage] = [*state.get("unfolded", []), *state.get("messages", [])]
    system_parts = [ctx.system_prompt]
    thread_system = [m for m in state.get("messages", [])[:1] if m.type == "system"]
    if thread_system:
        system_parts.append(thread_system[0].text)
        history = [m for m in history if m is not thread_system[0]]
    tokens: dict[str, int] = {"system": text_tokens("\n\n".join(system_parts))}
    for own in own_sections:
        body = own.render(state, ctx).strip()
        if body:
            system_parts.append(f"## {own.heading}\n{body}")
            tokens["own_sections"] = tokens.get("own_sections", 0) + text_tokens(body)
    recalled = state.get("recalled") or []
    profile = "\n".join(profile_line(p) for p in recalled if p["kind"] == "profile")
    summary = state.get("summary")
    summary_text = ""
    if summary and summary["text"]:
        summary_text = cap_summary(summary["text"], int(budget * shares.summary))
        tokens["summary"] = text_tokens(summary_text)
    recalled_body, dropped_recalled = render_recalled(
        [item for item in recalled if item["kind"] != "profile"], int(budget * shares.recalled)
    )
    # Earlier turns' recalled memories stay after the user message they answered, so the
    # history only grows between cuts; this turn shows only what they do not already say.
    said_ids = {m.id for m in history if m.id}
    earlier = {k: v for k, v in (state.get("recalled_shown") or {}).items() if k in said_ids}
    newest_id = next((m.id for m in reversed(history) if m.type == "human"), None)
    history = [n for m in history for n in [m, *recalled_message(earlier.get(m.id or "", ""))]]
    if recalled_body or earlier:
        system_parts.append(CITE_RECALLED)
    if profile or recalled_body or earlier:
        system_parts.append(MEMORY_IS_DATA)
    if profile:  # the profile is always in context; it is capped when it is written
        system_parts.append(memory_block([("User profile", profile)]))
        tokens["profile"] = text_tokens(profile)
    pins = state.get("pinned") or {}
    pin_room = int(budget * shares.pinned)
    all_pins, _ = render_pinned(pins, pin_room)

    def system_with(pinned_body: str) -> SystemMessage:
        parts = [*system_parts, *([f"## Pinned values\n{pinned_body}"] if pinned_body else [])]
        parts += [f"## Conversation summary\n{summary_text}"] if summary_text else []
        return SystemMessage(content="\n\n".join(parts))

    # Repaired on every prompt, not only over budget: one dangling tool call (a tool that
    # raised, a run stopped before its tools) would make every later request invalid.
    history = valid_history(history)
    history, cut_tools = cut_tool_results(history, int(budget * shares.tool_results))
    room = max(
        budget - message_tokens([system_with(all_pins), *recalled_message(recalled_body)]), 0
    )
    fitted = fit_window(history, room).kept if message_tokens(history) > room else history
    newest = max((i + 1 for i, m in enumerate(fitted) if m.id == newest_id), default=0)
    if newest_id in earlier:  # a tool round of this turn: its memories are already there
        newest += 1
        recalled_body = ""
    shown_before = {
        line
        for m in fitted[:newest]
        if m.additional_kwargs.get(RECALLED_KEY)
        for line in m.text.splitlines()
    }
    recalled_body = "\n".join(
        line for line in recalled_body.splitlines() if line not in shown_before
    )
    tail = recalled_message(recalled_body)
    tokens["recalled"] = text_tokens(recalled_body)
    # A value still said verbatim in the history is not pinned in the prompt yet: the pinned
    # section changes when the history's head does (a cut, then a fold), not every turn.
    said = "\n".join(str(m.content) for m in fitted)
    pinned_body, hidden_pins = render_pinned(
        {k: p for k, p in pins.items() if p["value"] not in said}, pin_room
    )
    system = system_with(pinned_body)
    tokens["pinned"] = text_tokens(pinned_body)
    messages = [system, *fitted[:newest], *tail, *fitted[newest:]]
    recalled_shown = {**earlier, **({newest_id: recalled_body} if newest_id and tail else {})}
    tool_messages = [m for m in fitted if isinstance(m, ToolMessage)]
    tokens["tool_results"] = message_tokens(tool_messages)
    tokens["history"] = message_tokens(fitted) - tokens["tool_results"]
    tokens["total"] = message_tokens(messages)
    tokens["cut_tool_results"] = cut_tools
    tokens["dropped_history"] = len(history) - len(fitted)
    tokens["dropped_recalled"] = dropped_recalled
    tokens["hidden_pinned"] = hidden_pins
    shown = {
        "budgets": {
            "total": budget,
            "pinned": pin_room,
            "recalled": int(budget * shares.recalled),
            "summary": int(budget * shares.summary),
            "tool_results": int(budget * shares.tool_results),
            "history": max(room - tokens["tool_results"], 0),
        },
        "recalled": shown_lines(
            "\n".join([*shown_before, recalled_body]),
            [(r["id"], recalled_line(r)) for r in recalled],
        ),
        "pinned": shown_lines(pinned_body, [(k, pinned_line(p)) for k, p in pinned_items(state)]),
        "summary": summary_text,
        "history_ids": [m.id for m in fitted if m.id],
    }
    return Prompt(messages=messages, tokens=tokens, shown=shown, recalled_shown=recalled_shown)


def recalled_message(body: str) -> list[BaseMessage]:
    """A turn's recalled memories as a message of their own right after its user message,
    quoted inside the memory block the system message frames as data."""
    if not body:
        return []
    text = memory_block([("Recalled memories", body)])
    return [HumanMessage(content=text, additional_kwargs={RECALLED_KEY: True})]


def breakpoints(messages: Sequence[BaseMessage]) -> list[int]:
    """Where Anthropic's cache breakpoints go: the system message, the end of the previous
    turn's user part (its message and recalled memories: the previous request marked it, so
    its prefix is read from the cache) and the end of the newest one (written, for the next
    request to read)."""
    ends = [
        i
        for i, m in enumerate(messages)
        if m.type == "human" and (i + 1 == len(messages) or messages[i + 1].type != "human")
    ]
    system = [0] if messages and messages[0].type == "system" else []
    return system + ends[-2:]


def with_breakpoints(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The messages with LangChain's cache-control convention on each breakpoint's last block
    (`"cache_control": {"type": "ephemeral"}`); a message with no text block stays unmarked."""
    marked = list(messages)
    for i in breakpoints(messages):
        content = messages[i].content
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        last = blocks[-1] if blocks else None
        if isinstance(last, dict) and last.get("type") == "text" and last.get("text"):
            block = {**last, "cache_control": {"type": "ephemeral"}}
            marked[i] = messages[i].model_copy(update={"content": [*blocks[:-1], block]})
    return marked


def pinned_items(state: AgentState) -> list[tuple[str, PinnedValue]]:
    """The thread's pins with their keys."""
    return list((state.get("pinned") or {}).items())


def recalled_line(item: RecalledItem) -> str:
    """How a recalled item is written in the prompt: dated, quoted, with its short id to cite."""
    return f"- ({item['learned_at'][:10]}) {quoted(item['text'])} [m:{short_id(item['id'])}]"


def profile_line(item: RecalledItem) -> str:
    """A profile field as `- field: "value"`; the value quoted like every remembered text."""
    field = item["id"].removeprefix("profile:")
    value = item["text"].removeprefix(f"{field}: ")
    return f"- {field}: {quoted(value)}"


def short_id(item_id: str) -> str:
    """The id's last eight characters (a time-ordered id's first ones repeat within a minute)."""
    return item_id[-8:]


def pinned_line(item: PinnedValue) -> str:
    """How a pinned value is written in the prompt."""
    return f"- {item['kind']}: {item['value']}"


def shown_lines(body: str, items: Sequence[tuple[str, str]]) -> list[str]:
    """The keys of `items` whose line made it into `body`."""
    lines = set(body.splitlines())
    return [key for key, line in items if line in lines]


def render_pinned(pinned: dict[str, PinnedValue], max_tokens: int) -> tuple[str, int]:
    """One line per value, newest first in each group; over budget, instructions get at
    most half of the share (so chatty constraints cannot hide an order number) and values
    the rest, and whatever is hidden is counted."""
    items = list(pinned.values())
    instructions = [p for p in reversed(items) if p["kind"] in INSTRUCTION_KINDS]
    values = [p for p in reversed(items) if p["kind"] not in INSTRUCTION_KINDS]
    shown_instructions, used = _lines(instructions, max_tokens // 2 if values else max_tokens)
    shown_values, _ = _lines(values, max_tokens - used)
    lines = shown_instructions + shown_values
    hidden = len(items) - len(lines)
    if hidden:
        lines.append(f"- ({hidden} older pinned values not shown)")
    return "\n".join(lines), hidden


def _lines(items: Sequence[PinnedValue], max_tokens: int) -> tuple[list[str], int]:
    lines: list[str] = []
    used = 0
    for item in items:
        line = pinned_line(item)
        cost = text_tokens(line) + 1
        if used + cost > max_tokens:
            break
        lines.append(line)
        used += cost
    return lines, used


def render_recalled(recalled: Sequence[RecalledItem], max_tokens: int) -> tuple[str, int]:
    """Highest score first; an item that does not fit is dropped whole, never cut."""
    lines: list[str] = []
    used = 0
    for item in sorted(recalled, key=lambda r: r["score"], reverse=True):
        line = recalled_line(item)
        cost = text_tokens(line) + 1
        if used + cost > max_tokens:
            continue
        lines.append(line)
        used += cost
    return "\n".join(lines), len(recalled) - len(lines)


def cut_tool_results(
    history: Sequence[BaseMessage], max_tokens: int
) -> tuple[list[BaseMessage], int]:
    """Fit all tool results in their share: the largest are cut first, to an equal cap."""
    sizes = {i: message_tokens([m]) for i, m in enumerate(history) if isinstance(m, ToolMessage)}
    if sum(sizes.values()) <= max_tokens:
        return list(history), 0
    low, high = MIN_MESSAGE_TOKENS, max(sizes.values())
    while low < high:
        cap = (low + high + 1) // 2
        if sum(min(size, cap) for size in sizes.values()) <= max_tokens:
            low = cap
        else:
            high = cap - 1
    result = list(history)
    cut = 0
    for i, size in sizes.items():
        message = result[i]
        if size > low:
            content, _ = cut_content(message.content, max(low - 8, MIN_MESSAGE_TOKENS))
            result[i] = message.model_copy(update={"content": content})
            cut += 1
    return result, cut
