"""The offline model must behave like a real chat model while being honest that it is not one."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Literal

import pytest
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.runnables import Runnable
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from recollect.models.offline import OFFLINE_LABEL, OFFLINE_MODEL_NAME, OfflineChatModel
from recollect.models.schema_instance import UnsatisfiableSchemaError, minimal_instance

SYSTEM = SystemMessage(
    "You are Recollect, a helpful assistant.\n\n"
    "## Pinned values\n"
    "- preferred_name: Ana\n"
    "- timezone: Europe/Lisbon\n\n"
    "## Recalled memories\n"
    "- Ana is allergic to peanuts\n"
    "- Ana's order #123 arrived damaged\n"
)


@tool
def request_refund(order_id: str, amount: float) -> str:
    """Refund an order."""
    return f"refunded {amount} for {order_id}"


@tool
def lookup_order(order_id: str) -> str:
    """Look an order up."""
    return f"order {order_id}"


class Evidence(BaseModel):
    source: str = Field(min_length=3)
    weight: float = Field(gt=0, le=1)


class Verdict(BaseModel):
    """A judgement with evidence."""

    confidence: float = Field(ge=0.7, le=1.0)
    label: Literal["keep", "drop", "merge"]
    evidence: list[Evidence]
    primary: Evidence
    note: str | None = None
    count: int = Field(default=3, ge=1)


class Node(BaseModel):
    value: int = Field(ge=5)
    children: list[Node]
    parent: Node | None


class Pair(TypedDict):
    key: str
    hits: int


def _reply(
    messages: Sequence[BaseMessage], model: Runnable[LanguageModelInput, Any] | None = None
) -> AIMessage:
    result = (model or OfflineChatModel()).invoke(messages)
    assert isinstance(result, AIMessage)
    return result


def _merge(chunks: Sequence[BaseMessage]) -> AIMessageChunk:
    assert chunks
    assert all(isinstance(chunk, AIMessageChunk) for chunk in chunks)
    first, *rest = [chunk for chunk in chunks if isinstance(chunk, AIMessageChunk)]
    return first + rest if rest else first


def test_is_a_real_chat_model_with_metadata() -> None:
    model = OfflineChatModel()
    reply = _reply([SYSTEM, HumanMessage("hi")], model)

    assert isinstance(model, BaseChatModel)
    assert model._llm_type == "recollect-offline"
    assert reply.response_metadata == {"model_name": OFFLINE_MODEL_NAME}
    assert reply.usage_metadata is not None
    assert reply.usage_metadata["input_tokens"] > 0
    assert reply.usage_metadata["output_tokens"] > 0
    assert reply.usage_metadata["total_tokens"] == (
        reply.usage_metadata["input_tokens"] + reply.usage_metadata["output_tokens"]
    )


def test_reply_is_labelled_and_says_why() -> None:
    text = _reply([SYSTEM, HumanMessage("hello")]).text

    assert text.startswith(f"{OFFLINE_LABEL} ")
    first_paragraph = text.split("\n\n", 1)[0]
    assert "OPENAI_API_KEY" in first_paragraph
    assert "OPENAI_BASE_URL" in first_paragraph
    assert "not a language model" in first_paragraph


def test_reply_quotes_latest_human_message_truncated() -> None:
    long_question = "why " * 200
    text = _reply(
        [SYSTEM, HumanMessage("an older question"), AIMessage("ok"), HumanMessage(long_question)]
    ).text

    assert "an older question" not in text
    quoted = text.split('You said: "', 1)[1].split('"', 1)[0]
    assert quoted.startswith("why why")
    assert len(quoted) <= 200


def test_reply_quotes_every_memory_section() -> None:
    text = _reply([SYSTEM, HumanMessage("what do you know about me?")]).text

    assert "Pinned values" in text
    assert "- timezone: Europe/Lisbon" in text
    assert "Recalled memories" in text
    assert "- Ana's order #123 arrived damaged" in text
    assert "You are Recollect" not in text
    assert "no memory" not in text


def test_large_sections_are_truncated() -> None:
    many = "\n".join(f"- fact number {i}" for i in range(50))
    huge = "x" * 5000
    system = SystemMessage(f"Prompt.\n## User profile\n{many}\n## Conversation summary\n{huge}\n")
    text = _reply([system, HumanMessage("hi")], OfflineChatModel(max_section_lines=12)).text

    assert "- fact number 11" in text
    assert "- fact number 12" not in text
    assert "38 more lines not shown" in text
    assert "x" * 1200 not in text
    assert len(text) < 4000


def test_no_sections_says_no_memory() -> None:
    text = _reply([SystemMessage("Just a prompt."), HumanMessage("hi")]).text

    assert "no memory" in text
    assert "Just a prompt." not in text


def test_deterministic() -> None:
    messages = [SYSTEM, HumanMessage("same question")]

    first, second = _reply(messages), _reply(messages, OfflineChatModel())

    assert first.content == second.content
    assert first.usage_metadata == second.usage_metadata


def test_stream_matches_invoke_in_several_chunks() -> None:
    model = OfflineChatModel()
    messages = [SYSTEM, HumanMessage("stream please")]

    chunks = list(model.stream(messages))
    merged = _merge(chunks)

    assert len(chunks) > 1
    assert merged.content == model.invoke(messages).content
    assert merged.usage_metadata == model.invoke(messages).usage_metadata


def test_stop_sequences_cut_the_text() -> None:
    model = OfflineChatModel()

    text = model.invoke([SYSTEM, HumanMessage("hi")], stop=["You said"]).text

    assert text.startswith(OFFLINE_LABEL)
    assert "You said" not in text


def test_forced_tool_gets_a_valid_call() -> None:
    model = OfflineChatModel().bind_tools(
        [lookup_order, request_refund], tool_choice="request_refund"
    )

    reply = _reply([SYSTEM, HumanMessage("nothing about tools here")], model)

    assert reply.content == ""
    assert len(reply.tool_calls) == 1
    call = reply.tool_calls[0]
    assert call["name"] == "request_refund"
    assert call["id"]
    assert request_refund.invoke(call["args"]).startswith("refunded")


@pytest.mark.parametrize(
    "choice",
    ["any", "required", True, {"type": "function", "function": {"name": "lookup_order"}}],
)
def test_any_or_required_forces_a_call(choice: Any) -> None:
    model = OfflineChatModel().bind_tools([lookup_order, request_refund], tool_choice=choice)

    reply = _reply([HumanMessage("hello")], model)

    assert [call["name"] for call in reply.tool_calls] == ["lookup_order"]


def test_forcing_an_unknown_tool_is_rejected() -> None:
    with pytest.raises(ValueError, match="not among the bound tools"):
        OfflineChatModel().bind_tools([lookup_order], tool_choice="request_refund")


def test_unforced_tool_is_not_called_unless_mentioned() -> None:
    model = OfflineChatModel().bind_tools([lookup_order, request_refund])

    plain = _reply([SYSTEM, HumanMessage("please refund my order")], model)
    named = _reply([SYSTEM, HumanMessage("please use request_refund for #123")], model)

    assert plain.tool_calls == []
    assert plain.text.startswith(OFFLINE_LABEL)
    assert "request_refund" in plain.text
    assert [call["name"] for call in named.tool_calls] == ["request_refund"]
    assert request_refund.invoke(named.tool_calls[0]["args"]).startswith("refunded")


def test_tool_choice_none_never_calls() -> None:
    model = OfflineChatModel().bind_tools([request_refund], tool_choice="none")

    reply = _reply([HumanMessage("request_refund now")], model)

    assert reply.tool_calls == []


def test_tool_message_last_gets_text_quoting_result() -> None:
    model = OfflineChatModel().bind_tools([request_refund])
    question = HumanMessage("please request_refund")
    call = _reply([SYSTEM, question], model)
    result = ToolMessage("refund #42 issued", tool_call_id=call.tool_calls[0]["id"])

    reply = _reply([SYSTEM, question, call, result], model)

    assert reply.tool_calls == []
    assert reply.text.startswith(OFFLINE_LABEL)
    assert "refund #42 issued" in reply.text
    assert "`request_refund`" in reply.text


def test_streamed_tool_call_matches_invoke() -> None:
    model = OfflineChatModel().bind_tools([request_refund], tool_choice="any")
    messages = [HumanMessage("go")]

    chunks = list(model.stream(messages))
    merged = _merge(chunks)

    invoked = _reply(messages, model)
    assert merged.tool_calls == invoked.tool_calls


def test_structured_output_nested_pydantic_is_valid() -> None:
    structured = OfflineChatModel().with_structured_output(Verdict)

    verdict = structured.invoke([SYSTEM, HumanMessage("judge this")])

    assert isinstance(verdict, Verdict)
    assert verdict.confidence >= 0.7
    assert verdict.label == "keep"
    assert verdict.evidence == []
    assert len(verdict.primary.source) >= 3
    assert 0 < verdict.primary.weight <= 1
    assert verdict.note is None
    assert verdict.count == 3


def test_structured_output_json_schema_dict() -> None:
    schema = {
        "title": "Extraction",
        "description": "Facts pulled from a message.",
        "type": "object",
        "properties": {
            "facts": {"type": "array", "items": {"type": "string"}, "minItems": 1},
            "salience": {"type": "integer", "exclusiveMinimum": 3, "maximum": 10},
            "kind": {"enum": ["profile", "episode"]},
            "optional": {"type": "string"},
        },
        "required": ["facts", "salience", "kind"],
    }

    extracted = OfflineChatModel().with_structured_output(schema).invoke("extract")

    assert isinstance(extracted, dict)
    assert set(extracted) == {"facts", "salience", "kind"}
    assert len(extracted["facts"]) == 1
    assert isinstance(extracted["facts"][0], str)
    assert 3 < extracted["salience"] <= 10
    assert extracted["kind"] == "profile"


def test_structured_output_typed_dict() -> None:
    pair = OfflineChatModel().with_structured_output(Pair).invoke("pair")

    assert isinstance(pair, dict)
    assert isinstance(pair["key"], str)
    assert isinstance(pair["hits"], int)


@pytest.mark.parametrize("method", ["function_calling", "json_schema", "json_mode"])
def test_structured_output_include_raw(method: str) -> None:
    structured = OfflineChatModel().with_structured_output(Verdict, method=method, include_raw=True)

    out = structured.invoke("judge")

    assert isinstance(out, dict)
    assert out["parsing_error"] is None
    assert isinstance(out["parsed"], Verdict)
    assert isinstance(out["raw"], AIMessage)
    assert out["raw"].tool_calls[0]["name"] == "Verdict"


def test_structured_output_async() -> None:
    structured = OfflineChatModel().with_structured_output(Verdict)

    verdict = asyncio.run(structured.ainvoke("judge"))

    assert isinstance(verdict, Verdict)


def test_minimal_instance_is_valid_for_recursive_pydantic_schema() -> None:
    value = minimal_instance(Node.model_json_schema())

    node = Node.model_validate(value)

    assert node == Node(value=5, children=[], parent=None)


def test_minimal_instance_constraints() -> None:
    schema = {
        "$defs": {"Id": {"type": "string", "format": "uuid"}},
        "type": "object",
        "properties": {
            "id": {"$ref": "#/$defs/Id"},
            "when": {"type": "string", "format": "date-time"},
            "code": {"type": "string", "pattern": "^[0-9]+$"},
            "short": {"type": "string", "maxLength": 3},
            "long": {"type": "string", "minLength": 10},
            "open_range": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
            "negative": {"type": "integer", "maximum": -4},
            "even": {"type": "integer", "minimum": 3, "multipleOf": 2},
            "pair": {"type": "array", "prefixItems": [{"type": "boolean"}, {"const": 7}]},
            "either": {"anyOf": [{"type": "null"}, {"type": "integer", "minimum": 2}]},
            "both": {
                "allOf": [
                    {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
                    {"properties": {"b": {"type": "boolean"}}, "required": ["b"]},
                ]
            },
            "typed_union": {"type": ["null", "string"]},
            "skipped": {"type": "string", "default": "d"},
            "mode": {"type": "string", "enum": ["slow", "fast"], "default": "fast"},
        },
        "required": [
            "id",
            "when",
            "code",
            "short",
            "long",
            "open_range",
            "negative",
            "even",
            "pair",
            "either",
            "both",
            "typed_union",
            "mode",
        ],
    }

    value = minimal_instance(schema)

    assert value == {
        "id": "00000000-0000-0000-0000-000000000000",
        "when": "1970-01-01T00:00:00Z",
        "code": "0",
        "short": "off",
        "long": "offline---",
        "open_range": 0.5,
        "negative": -4,
        "even": 4,
        "pair": [False, 7],
        "either": 2,
        "both": {"a": 0, "b": False},
        "typed_union": "offline",
        "mode": "fast",
    }


def test_minimal_instance_rejects_infinite_schema() -> None:
    loop = {
        "type": "object",
        "properties": {"next": {"$ref": "#/$defs/Loop"}},
        "required": ["next"],
    }
    schema = {
        "$defs": {"Loop": loop},
        "type": "object",
        "properties": {"head": {"$ref": "#/$defs/Loop"}},
        "required": ["head"],
    }

    with pytest.raises(UnsatisfiableSchemaError):
        minimal_instance(schema)


def test_runs_inside_a_langgraph_state_graph() -> None:
    model = OfflineChatModel()

    def call_model(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [model.invoke([SYSTEM, *state["messages"]])]}

    builder = StateGraph(MessagesState)
    builder.add_node("call_model", call_model)
    builder.add_edge(START, "call_model")
    builder.add_edge("call_model", END)
    graph = builder.compile()

    state = graph.invoke({"messages": [HumanMessage("remember my timezone?")]})

    last = state["messages"][-1]
    assert isinstance(last, AIMessage)
    assert last.text.startswith(OFFLINE_LABEL)
    assert "remember my timezone?" in last.text
    assert "Europe/Lisbon" in last.text
    streamed = [
        chunk
        for chunk, _meta in graph.stream(
            {"messages": [HumanMessage("remember my timezone?")]}, stream_mode="messages"
        )
        if isinstance(chunk, AIMessageChunk)
    ]
    assert len(streamed) > 1
    assert "".join(str(chunk.content) for chunk in streamed) == last.text
