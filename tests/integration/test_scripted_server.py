"""The scripted server must look like OpenAI to the real client, or every test built on it lies."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator

import openai
import pydantic
import pytest
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessageChunk,
    HumanMessage,
    SystemMessage,
)
from langchain_openai import ChatOpenAI, OpenAIEmbeddings
from pydantic import BaseModel

from tests.support.scripted_openai import Reply, ScriptedOpenAI, ToolCall, hashed_embedding


class CityFact(BaseModel):
    """A fact about a city."""

    city: str
    population: int


class GetWeather(BaseModel):
    """Look up the current weather for a city."""

    city: str


@pytest.fixture
def llm() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI() as server:
        yield server


def chat(llm: ScriptedOpenAI, **kwargs: object) -> ChatOpenAI:
    options: dict[str, object] = {"model": "gpt-4o-mini", "max_retries": 0, "timeout": 5}
    options.update(kwargs)
    return ChatOpenAI(base_url=llm.base_url, api_key="test", **options)


def embedder(llm: ScriptedOpenAI, **kwargs: object) -> OpenAIEmbeddings:
    return OpenAIEmbeddings(  # type: ignore[call-arg]
        model="text-embedding-3-small",
        base_url=llm.base_url,
        api_key="test",
        check_embedding_ctx_length=False,
        **kwargs,
    )


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_plain_invoke_returns_scripted_text_then_falls_back_to_echo(llm: ScriptedOpenAI) -> None:
    llm.reply("Paris is the capital of France.")
    model = chat(llm)

    first = model.invoke("What is the capital of France?")
    second = model.invoke("unscripted question")

    assert first.content == "Paris is the capital of France."
    assert first.response_metadata["finish_reason"] == "stop"
    assert first.usage_metadata is not None
    assert first.usage_metadata["output_tokens"] == len("Paris is the capital of France.") // 4
    assert second.content == "scripted reply to: unscripted question"
    assert llm.pending == 0


def test_stream_reassembles_text_from_several_chunks(llm: ScriptedOpenAI) -> None:
    text = "The quick brown fox jumps over the lazy dog."
    llm.reply(text)

    chunks = list(chat(llm, stream_usage=True).stream("tell me a pangram"))

    assert len([c for c in chunks if c.content]) > 3
    merged = chunks[0]
    for chunk in chunks[1:]:
        merged += chunk
    assert merged.content == text
    assert merged.usage_metadata is not None
    assert merged.usage_metadata["output_tokens"] == len(text) // 4
    assert llm.chat_requests[-1]["stream"] is True
    assert llm.chat_requests[-1]["stream_options"] == {"include_usage": True}


def test_bound_tools_receive_scripted_tool_calls(llm: ScriptedOpenAI) -> None:
    llm.reply_tool_calls([{"name": "GetWeather", "args": {"city": "Oslo"}, "id": "call_w1"}])
    model = chat(llm).bind_tools([GetWeather])

    message = model.invoke("Weather in Oslo?")

    assert isinstance(message, AIMessage)
    assert message.tool_calls == [
        {"name": "GetWeather", "args": {"city": "Oslo"}, "id": "call_w1", "type": "tool_call"}
    ]
    assert message.response_metadata["finish_reason"] == "tool_calls"
    sent_tools = llm.chat_requests[-1]["tools"]
    assert [tool["function"]["name"] for tool in sent_tools] == ["GetWeather"]


def test_streamed_tool_call_arguments_reassemble(llm: ScriptedOpenAI) -> None:
    args = {"city": "Reykjavik, Iceland", "note": "long enough to need several deltas"}
    llm.enqueue(Reply(tool_calls=(ToolCall("GetWeather", args),)))
    model = chat(llm).bind_tools([GetWeather])

    chunks = [chunk for chunk in model.stream("Weather?") if isinstance(chunk, AIMessageChunk)]
    merged: BaseMessageChunk = chunks[0]
    for chunk in chunks[1:]:
        merged += chunk

    assert isinstance(merged, AIMessageChunk)
    assert len(merged.tool_calls) == 1
    assert merged.tool_calls[0]["name"] == "GetWeather"
    assert merged.tool_calls[0]["args"] == args
    assert str(merged.tool_calls[0]["id"]).startswith("call_")


@pytest.mark.parametrize("method", ["json_schema", "function_calling"])
def test_structured_output_returns_model_instance(llm: ScriptedOpenAI, method: str) -> None:
    llm.reply_json({"city": "Lyon", "population": 522000})
    structured = chat(llm).with_structured_output(CityFact, method=method)  # type: ignore[arg-type]

    result = structured.invoke("Tell me about Lyon")

    assert result == CityFact(city="Lyon", population=522000)
    request = llm.chat_requests[-1]
    if method == "json_schema":
        assert request["response_format"]["type"] == "json_schema"
        assert "tools" not in request
    else:
        assert request["tool_choice"] == {"type": "function", "function": {"name": "CityFact"}}


def test_malformed_json_content_makes_structured_output_raise(llm: ScriptedOpenAI) -> None:
    llm.reply_raw_content('{"city": "Lyon", "population": ')
    structured = chat(llm).with_structured_output(CityFact, method="json_schema")

    with pytest.raises(pydantic.ValidationError, match="Invalid JSON"):
        structured.invoke("Tell me about Lyon")


def test_schema_violating_tool_arguments_make_function_calling_raise(llm: ScriptedOpenAI) -> None:
    llm.reply_json({"city": "Lyon", "population": "lots"})
    structured = chat(llm).with_structured_output(CityFact, method="function_calling")

    with pytest.raises(pydantic.ValidationError, match="population"):
        structured.invoke("Tell me about Lyon")


def test_malformed_tool_arguments_reach_the_client_as_invalid_tool_call(
    llm: ScriptedOpenAI,
) -> None:
    llm.reply_raw_content('{"city": "Ly')
    structured = chat(llm).with_structured_output(
        CityFact, method="function_calling", include_raw=True
    )

    result = structured.invoke("Tell me about Lyon")

    assert isinstance(result, dict)
    assert result["parsed"] is None
    assert result["raw"].invalid_tool_calls[0]["args"] == '{"city": "Ly'


def test_http_500_surfaces_as_internal_server_error(llm: ScriptedOpenAI) -> None:
    llm.reply_error(500, "scripted outage")

    with pytest.raises(openai.InternalServerError, match="scripted outage") as caught:
        chat(llm).invoke("hello")

    assert caught.value.status_code == 500
    assert len(llm.chat_requests) == 1


def test_rate_limit_maps_to_rate_limit_error(llm: ScriptedOpenAI) -> None:
    llm.reply_error(429, "slow down")

    with pytest.raises(openai.RateLimitError, match="slow down"):
        chat(llm).invoke("hello")


def test_delay_longer_than_timeout_raises_and_server_keeps_serving(llm: ScriptedOpenAI) -> None:
    llm.reply_delay(3.0, then="too late")
    model = chat(llm, timeout=0.3)

    with pytest.raises(openai.APITimeoutError):
        model.invoke("are you there?")

    assert model.invoke("still there?").content == "scripted reply to: still there?"


def test_short_delay_still_answers(llm: ScriptedOpenAI) -> None:
    llm.reply("eventually", delay=0.05)

    assert chat(llm).invoke("hi").content == "eventually"


def test_max_tokens_truncates_and_reports_length(llm: ScriptedOpenAI) -> None:
    llm.reply("x" * 400)

    message = chat(llm, max_tokens=10).invoke("ramble")

    assert message.content == "x" * 40
    assert message.response_metadata["finish_reason"] == "length"


def test_custom_default_responder_answers_unscripted_requests(llm: ScriptedOpenAI) -> None:
    llm.set_default(lambda request: Reply(text=f"{len(request['messages'])} messages"))

    message = chat(llm).invoke([SystemMessage("be brief"), HumanMessage("hi")])

    assert message.content == "2 messages"


def test_embeddings_are_unit_vectors_and_reflect_word_overlap() -> None:
    with ScriptedOpenAI(embedding_dim=64) as llm:
        embeddings = embedder(llm)
        cat_a, cat_b, finance = embeddings.embed_documents(
            [
                "the cat sat on the warm mat",
                "a cat sat on the mat",
                "quarterly revenue exceeded analyst forecasts",
            ]
        )
        query = embeddings.embed_query("the cat sat on the warm mat")

    assert len(cat_a) == 64
    assert math.isclose(math.sqrt(cosine(cat_a, cat_a)), 1.0, rel_tol=1e-5)
    assert cosine(cat_a, cat_b) > cosine(cat_a, finance) + 0.3
    assert query == pytest.approx(cat_a, abs=1e-6)
    assert cat_a == pytest.approx(hashed_embedding("the cat sat on the warm mat"), abs=1e-6)
    assert llm.embedding_requests[0]["input"][2].startswith("quarterly")


def test_embedding_dimensions_parameter_is_honoured(llm: ScriptedOpenAI) -> None:
    assert len(embedder(llm, dimensions=16).embed_query("hello world")) == 16


def test_requests_are_recorded_with_messages_and_model(llm: ScriptedOpenAI) -> None:
    llm.reply("ok")
    chat(llm, model="gpt-4.1-mini").invoke([SystemMessage("sys prompt"), HumanMessage("hi")])

    assert len(llm.requests) == 1
    assert llm.chat_requests[0]["model"] == "gpt-4.1-mini"
    assert [(m["role"], m["content"]) for m in llm.last_messages()] == [
        ("system", "sys prompt"),
        ("user", "hi"),
    ]


def test_concurrent_async_requests_are_all_answered_and_recorded(llm: ScriptedOpenAI) -> None:
    model = chat(llm, timeout=2)

    async def ask_all() -> list[str]:
        replies = await asyncio.gather(*(model.ainvoke(f"question {i}") for i in range(24)))
        return [str(reply.content) for reply in replies]

    answers = asyncio.run(ask_all())

    assert answers == [f"scripted reply to: question {i}" for i in range(24)]
    assert len(llm.chat_requests) == 24


def test_models_endpoint_lists_models(llm: ScriptedOpenAI) -> None:
    client = openai.OpenAI(base_url=llm.base_url, api_key="test", max_retries=0)

    model_ids = [model.id for model in client.models.list()]

    assert "gpt-4o-mini" in model_ids
    assert "text-embedding-3-small" in model_ids


def test_n_choices_each_carry_the_reply(llm: ScriptedOpenAI) -> None:
    llm.reply("same answer")
    client = openai.OpenAI(base_url=llm.base_url, api_key="test", max_retries=0)

    completion = client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}], n=3
    )

    assert [choice.message.content for choice in completion.choices] == ["same answer"] * 3
    assert [choice.index for choice in completion.choices] == [0, 1, 2]


def test_base_url_requires_a_running_server() -> None:
    server = ScriptedOpenAI()
    with pytest.raises(RuntimeError, match="not running"):
        _ = server.base_url
    server.start()
    try:
        assert server.base_url.startswith("http://127.0.0.1:")
        assert server.base_url.endswith("/v1")
    finally:
        server.stop()
