"""A deterministic chat model for running Recollect without an LLM provider.

With no OPENAI_API_KEY or OPENAI_BASE_URL configured the app still has to start, route
messages, call tools and exercise every memory path. This model stands in for the LLM: it
never touches the network, always gives the same answer for the same input, says plainly
that it is offline, and echoes the memory it was handed so the memory plumbing stays visible.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LangSmithParams, LanguageModelInput
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
)
from langchain_core.messages.ai import UsageMetadata
from langchain_core.messages.tool import tool_call, tool_call_chunk
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

from recollect.models.schema_instance import minimal_instance

__all__ = [
    "OFFLINE_LABEL",
    "OFFLINE_MODEL_NAME",
    "OFFLINE_NOTICE",
    "RECALLED_KEY",
    "OfflineChatModel",
]

OFFLINE_LABEL = "[offline model]"
OFFLINE_MODEL_NAME = "recollect-offline"
OFFLINE_NOTICE = (
    "No OPENAI_API_KEY or OPENAI_BASE_URL is set, so this reply comes from a deterministic "
    "stand-in, not a language model."
)

RECALLED_KEY = "recollect_recalled"
"""Marks the prompt message carrying this turn's recalled memories (in `additional_kwargs`);
the offline model quotes its sections as it quotes the system message's."""
_SECTION_HEADING = "## "
_DELIMITER = re.compile(r"</?[a-z_]+>")
"""A line that only opens or closes a block of sections (`<memory>`) is not memory itself."""
_ToolMode = Literal["auto", "none", "any", "named"]
_ToolLike = dict[str, Any] | type | Callable[..., Any] | BaseTool


class OfflineChatModel(BaseChatModel):
    """Offline, deterministic stand-in for the chat model.

    Text replies start with `OFFLINE_LABEL`, quote the latest human message, any tool
    results, and every `## ` memory section of the system prompt. Tool calls happen when a
    tool is forced (which is also how `with_structured_output` works) or when the latest human
    message names a bound tool; their arguments are the smallest schema-valid value.
    """

    model_name: str = OFFLINE_MODEL_NAME
    max_quote_chars: int = Field(default=200, ge=1)
    max_section_lines: int = Field(default=12, ge=1)
    max_section_chars: int = Field(default=1200, ge=1)
    max_tool_result_chars: int = Field(default=500, ge=1)

    @property
    def _llm_type(self) -> str:
        return OFFLINE_MODEL_NAME

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": self.model_name}

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> LangSmithParams:
        params = super()._get_ls_params(stop=stop, **kwargs)
        params["ls_provider"] = "recollect"
        params["ls_model_name"] = self.model_name
        return params

    def bind_tools(
        self,
        tools: Sequence[_ToolLike],
        *,
        tool_choice: str | dict[str, Any] | bool | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind tools the way provider models do, so `_generate` receives them as kwargs."""
        formatted = [convert_to_openai_tool(tool) for tool in tools]
        names = [_tool_name(tool) for tool in formatted]
        mode, forced = _tool_mode(tool_choice)
        if mode == "named" and forced not in names:
            msg = f"tool_choice names {forced!r}, which is not among the bound tools {names}"
            raise ValueError(msg)
        return self.bind(tools=formatted, tool_choice=tool_choice, **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        message = self._respond(messages, stop, **kwargs)
        return ChatResult(generations=[ChatGeneration(message=message)])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        """The same reply as `_generate`, computed on the caller's loop: it is a few
        milliseconds of string work, cheaper than a hop to an executor thread."""
        message = self._respond(messages, stop, **kwargs)
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        """Stream the same reply `invoke` gives, paragraph by paragraph."""
        message = self._respond(messages, stop, **kwargs)
        finale: dict[str, Any] = {
            "usage_metadata": message.usage_metadata,
            "response_metadata": dict(message.response_metadata),
            "chunk_position": "last",
        }
        if message.tool_calls:
            chunk_calls = [
                tool_call_chunk(
                    name=call["name"], args=json.dumps(call["args"]), id=call["id"], index=index
                )
                for index, call in enumerate(message.tool_calls)
            ]
            chunk = ChatGenerationChunk(
                message=AIMessageChunk(content="", tool_call_chunks=chunk_calls, **finale)
            )
            if run_manager:
                run_manager.on_llm_new_token("", chunk=chunk)
            yield chunk
            return
        pieces = re.split(r"(?<=\n\n)", str(message.content)) or [""]
        for position, piece in enumerate(pieces):
            extra = finale if position == len(pieces) - 1 else {}
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=piece, **extra))
            if run_manager:
                run_manager.on_llm_new_token(piece, chunk=chunk)
            yield chunk

    def _respond(
        self, messages: Sequence[BaseMessage], stop: list[str] | None, **kwargs: Any
    ) -> AIMessage:
        tools = [convert_to_openai_tool(tool) for tool in kwargs.get("tools") or ()]
        calls = self._plan_tool_calls(
            messages,
            tools,
            kwargs.get("tool_choice"),
            parallel=kwargs.get("parallel_tool_calls") is not False,
        )
        content = "" if calls else _apply_stop(self._compose_text(messages, tools), stop)
        draft = AIMessage(content=content, tool_calls=calls)
        bound: list[BaseTool | dict[str, Any]] = list(tools)
        input_tokens = count_tokens_approximately(messages, tools=bound or None)
        output_tokens = count_tokens_approximately([draft])
        return AIMessage(
            content=content,
            tool_calls=calls,
            usage_metadata=UsageMetadata(
                input_tokens=input_tokens,
                output_tokens=output_tokens,
                total_tokens=input_tokens + output_tokens,
            ),
            response_metadata={"model_name": self.model_name},
        )

    def _plan_tool_calls(
        self,
        messages: Sequence[BaseMessage],
        tools: list[dict[str, Any]],
        tool_choice: Any,
        *,
        parallel: bool,
    ) -> list[ToolCall]:
        """Decide which tools to call; forced choices always win, mentions only once per turn."""
        if not tools:
            return []
        by_name = {_tool_name(tool): tool for tool in tools}
        mode, forced = _tool_mode(tool_choice)
        if mode == "none":
            return []
        human = _latest_human(messages)
        mentioned = _mentioned_tools(str(human.text) if human else "", list(by_name))
        if mode == "named" and forced in by_name:
            chosen = [forced]
        elif mode in ("any", "named"):
            chosen = mentioned[:1] or [next(iter(by_name))]
        elif _tool_results_since_human(messages):
            chosen = []
        else:
            chosen = mentioned if parallel else mentioned[:1]
        fingerprint = _fingerprint(messages)
        return [
            tool_call(
                name=name,
                args=_tool_args(by_name[name]),
                id=_call_id(fingerprint, index, name),
            )
            for index, name in enumerate(chosen)
        ]

    def _compose_text(self, messages: Sequence[BaseMessage], tools: list[dict[str, Any]]) -> str:
        parts = [f"{OFFLINE_LABEL} {OFFLINE_NOTICE}"]
        human = _latest_human(messages)
        if human is None:
            parts.append("There is no message from you to answer yet.")
        else:
            parts.append(f'You said: "{_clip(_one_line(str(human.text)), self.max_quote_chars)}"')
        for result in _trailing_tool_results(messages):
            name = result.name or _tool_name_for(messages, result.tool_call_id) or "tool"
            text = _clip(_one_line(str(result.text)), self.max_tool_result_chars)
            parts.append(f'Tool `{name}` returned: "{text}"')
        if tools and not isinstance(messages[-1] if messages else None, ToolMessage):
            names = ", ".join(_tool_name(tool) for tool in tools)
            parts.append(f"Tools I would call if you name one: {names}.")
        parts.append(self._quote_memory(messages))
        return "\n\n".join(parts)

    def _quote_memory(self, messages: Sequence[BaseMessage]) -> str:
        system_text = "\n".join(
            str(m.text)
            for m in messages
            if isinstance(m, SystemMessage) or m.additional_kwargs.get(RECALLED_KEY)
        )
        sections = _memory_sections(system_text)
        if not sections:
            return "I was given no memory."
        noun = "section" if len(sections) == 1 else "sections"
        lines = [f"Memory I was given ({len(sections)} {noun}):"]
        for name, body in sections:
            lines.append(f"{name}:")
            lines.extend(f"> {line}" for line in self._clip_section(body))
        return "\n".join(lines)

    def _clip_section(self, body: list[str]) -> list[str]:
        """Keep a section readable: at most `max_section_lines` lines and `max_section_chars`."""
        if not body:
            return ["(empty)"]
        kept: list[str] = []
        budget = self.max_section_chars
        for line in body:
            if len(kept) == self.max_section_lines or budget <= 0:
                break
            clipped = _clip(line, budget)
            kept.append(clipped)
            budget -= len(clipped)
        hidden = len(body) - len(kept)
        if hidden:
            kept.append(f"… ({hidden} more line{'s' if hidden != 1 else ''} not shown)")
        return kept


def _tool_mode(tool_choice: Any) -> tuple[_ToolMode, str | None]:
    """Normalise the tool_choice spellings used by OpenAI, Anthropic and LangChain."""
    if tool_choice is None or tool_choice == "auto":
        return "auto", None
    if tool_choice is False or tool_choice == "none":
        return "none", None
    if tool_choice is True or tool_choice in ("any", "required"):
        return "any", None
    if isinstance(tool_choice, str):
        return "named", tool_choice
    if isinstance(tool_choice, dict):
        kind = tool_choice.get("type")
        function = tool_choice.get("function")
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            return "named", function["name"]
        if isinstance(tool_choice.get("name"), str):
            return "named", tool_choice["name"]
        if kind in ("auto", "none", "any", "required"):
            return _tool_mode(kind)
    msg = f"unsupported tool_choice: {tool_choice!r}"
    raise ValueError(msg)


def _tool_name(tool: dict[str, Any]) -> str:
    return str(tool["function"]["name"])


def _tool_args(tool: dict[str, Any]) -> dict[str, Any]:
    parameters = tool["function"].get("parameters") or {"type": "object", "properties": {}}
    args = minimal_instance(parameters)
    return args if isinstance(args, dict) else {}


def _mentioned_tools(text: str, names: list[str]) -> list[str]:
    """Tool names written literally in `text`, in the order they first appear."""
    positions: list[tuple[int, str]] = []
    for name in names:
        found = re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text, re.IGNORECASE)
        if found:
            positions.append((found.start(), name))
    return [name for _, name in sorted(positions)]


def _latest_human(messages: Sequence[BaseMessage]) -> HumanMessage | None:
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return message
    return None


def _tool_results_since_human(messages: Sequence[BaseMessage]) -> bool:
    """True once a tool has answered in this turn, so that mentions cannot loop."""
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return False
        if isinstance(message, ToolMessage):
            return True
    return False


def _trailing_tool_results(messages: Sequence[BaseMessage]) -> list[ToolMessage]:
    results: list[ToolMessage] = []
    for message in reversed(messages):
        if not isinstance(message, ToolMessage):
            break
        results.append(message)
    return results[::-1]


def _tool_name_for(messages: Sequence[BaseMessage], call_id: str) -> str | None:
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                if call["id"] == call_id:
                    return call["name"]
    return None


def _memory_sections(system_text: str) -> list[tuple[str, list[str]]]:
    """Split the system prompt into `## ` sections; text before the first heading is prompt."""
    sections: list[tuple[str, list[str]]] = []
    for line in system_text.splitlines():
        if line.startswith(_SECTION_HEADING):
            sections.append((line[len(_SECTION_HEADING) :].strip() or "(untitled)", []))
        elif sections and line.strip() and not _DELIMITER.fullmatch(line.strip()):
            sections[-1][1].append(line.rstrip())
    return sections


def _fingerprint(messages: Sequence[BaseMessage]) -> str:
    """Stable digest of the conversation, so tool-call ids are unique yet reproducible."""
    digest = hashlib.sha256()
    for message in messages:
        digest.update(message.type.encode())
        digest.update(b"\0")
        digest.update(str(message.text).encode())
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                digest.update(f"\0{call['id']}\0{call['name']}".encode())
        if isinstance(message, ToolMessage):
            digest.update(f"\0{message.tool_call_id}".encode())
        digest.update(b"\1")
    return digest.hexdigest()


def _call_id(fingerprint: str, index: int, name: str) -> str:
    suffix = hashlib.sha256(f"{fingerprint}:{index}:{name}".encode()).hexdigest()[:24]
    return f"call_offline_{suffix}"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(limit - 1, 0)].rstrip() + "…"


def _apply_stop(text: str, stop: list[str] | None) -> str:
    cut = min((text.find(s) for s in stop or () if s and s in text), default=len(text))
    return text[:cut]
