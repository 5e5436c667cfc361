"""Assemble what the model sees: one system message with memory sections, then the tail.

Each memory section is a `## Heading` block so any model (and the offline one) can tell
memory from instructions.
"""

from __future__ import annotations

from dataclasses import dataclass

from langchain_core.messages import AnyMessage, BaseMessage, SystemMessage
from langchain_core.messages.utils import count_tokens_approximately

from recollect.state.agent import AgentState
from recollect.state.context import Context


@dataclass(frozen=True)
class Prompt:
    """The messages to send and the tokens each category used."""

    messages: list[BaseMessage]
    tokens: dict[str, int]


def _tokens(text: str) -> int:
    return count_tokens_approximately([SystemMessage(content=text)]) if text else 0


def memory_sections(state: AgentState) -> dict[str, str]:
    """Section name → body, only for memory that is present."""
    sections: dict[str, str] = {}
    pinned = state.get("pinned") or {}
    if pinned:
        sections["Pinned values"] = "\n".join(
            f"- {key}: {item['value']}" for key, item in sorted(pinned.items())
        )
    recalled = state.get("recalled") or []
    profile = [item for item in recalled if item["kind"] == "profile"]
    if profile:
        sections["User profile"] = "\n".join(f"- {item['text']}" for item in profile)
    dated = [item for item in recalled if item["kind"] != "profile"]
    if dated:  # dated, so the model can discount old material
        sections["Recalled memories"] = "\n".join(
            f"- ({item['learned_at'][:10]}) {item['text']}" for item in dated
        )
    summary = state.get("summary")
    if summary and summary["text"]:
        sections["Conversation summary"] = summary["text"]
    return sections


def build_prompt(state: AgentState, ctx: Context) -> Prompt:
    """System prompt (plus any system message in the thread), memory sections, then history."""
    history: list[AnyMessage] = list(state.get("messages", []))
    system_parts = [ctx.system_prompt]
    if history and history[0].type == "system":
        system_parts.append(str(history[0].content))
        history = history[1:]
    tokens = {"system": _tokens("\n\n".join(system_parts))}
    for name, body in memory_sections(state).items():
        system_parts.append(f"## {name}\n{body}")
        tokens[name.lower().replace(" ", "_")] = _tokens(body)
    tokens["history"] = count_tokens_approximately(history) if history else 0
    system = SystemMessage(content="\n\n".join(system_parts))
    tokens["total"] = count_tokens_approximately([system, *history])
    return Prompt(messages=[system, *history], tokens=tokens)
