"""A local OpenAI-compatible server that answers from a script.

Tests point the real ``openai`` / ``langchain-openai`` clients at it, so HTTP, SSE parsing,
structured output, error mapping and timeouts are exercised for real without network access
and without mocking application code.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import itertools
import json
import math
import re
import struct
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

__all__ = [
    "DEFAULT_EMBEDDING_DIM",
    "Reply",
    "Responder",
    "ScriptedError",
    "ScriptedOpenAI",
    "ToolCall",
    "echo_responder",
    "hashed_embedding",
    "message_order_errors",
]

JsonDict = dict[str, Any]

DEFAULT_EMBEDDING_DIM = 64
MODEL_IDS = ("gpt-4o-mini", "gpt-4o", "gpt-4.1-mini", "text-embedding-3-small")

_WORD = re.compile(r"\w+")
_TEXT_PIECE = re.compile(r"\S+\s*|\s+")
_ARGUMENT_PIECE_CHARS = 8
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    409: "conflict_error",
    422: "invalid_request_error",
    429: "rate_limit_error",
}


@dataclass(frozen=True)
class ToolCall:
    """A function call the scripted model makes; an ``id`` is generated when omitted."""

    name: str
    args: Mapping[str, Any] = field(default_factory=dict)
    id: str | None = None


@dataclass(frozen=True)
class ScriptedError:
    """An HTTP failure shaped like OpenAI's, so the SDK maps it to its own exception types."""

    status: int
    message: str
    type: str | None = None

    def body(self) -> JsonDict:
        kind = self.type or _ERROR_TYPES.get(self.status, "server_error")
        return {"error": {"message": self.message, "type": kind, "param": None, "code": None}}


@dataclass(frozen=True)
class Reply:
    """One scripted model turn.

    ``text`` is ordinary content (cut short by ``max_tokens``). ``json`` is already-serialised
    structured output and ``raw`` is arbitrary text such as malformed JSON; both are sent
    verbatim, as the arguments of a call to the forced tool when the request forces one
    (``function_calling`` structured output) and as content otherwise (``json_schema``). A reply
    without any payload defers to the default responder, which lets a bare ``delay`` slow down
    an otherwise ordinary answer.
    """

    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    json: str | None = None
    raw: str | None = None
    error: ScriptedError | None = None
    delay: float = 0.0

    @property
    def has_payload(self) -> bool:
        fields = (self.text, self.json, self.raw, self.error)
        return bool(self.tool_calls) or any(value is not None for value in fields)


Responder = Callable[[JsonDict], Reply]


def _content_text(content: object) -> str:
    """Flatten string or multi-part message content to the text a model would read."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [part.get("text") for part in content if isinstance(part, dict)]
        return "".join(part for part in parts if isinstance(part, str))
    return ""


def _last_user_text(request: JsonDict) -> str:
    for message in reversed(request.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            return _content_text(message.get("content"))
    return ""


def message_order_errors(messages: list[JsonDict]) -> list[str]:
    """What the OpenAI API rejects with a 400 in a chat request's message order.

    Every assistant message with `tool_calls` must be followed at once by one `tool` message
    per call id; a `tool` message must answer a call of the assistant message just before it.
    """
    errors: list[str] = []
    open_ids: set[str] = set()
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in open_ids:
                errors.append(
                    f"messages[{index}]: messages with role 'tool' must be a response to a "
                    "preceeding message with 'tool_calls'"
                )
            open_ids.discard(str(call_id))
            continue
        if open_ids:
            errors.append(
                f"messages[{index - 1}]: an assistant message with 'tool_calls' must be "
                f"followed by tool messages responding to each 'tool_call_id': {sorted(open_ids)}"
            )
            open_ids = set()
        if role == "assistant":
            open_ids = {str(call["id"]) for call in message.get("tool_calls") or []}
    if open_ids:
        errors.append(
            "an assistant message with 'tool_calls' must be followed by tool messages "
            f"responding to each 'tool_call_id': {sorted(open_ids)}"
        )
    return errors


def echo_responder(request: JsonDict) -> Reply:
    """Answer traceably to the prompt, so unscripted calls are easy to spot in assertions."""
    return Reply(text=f"scripted reply to: {_last_user_text(request)}")


def hashed_embedding(text: str, dim: int = DEFAULT_EMBEDDING_DIM) -> list[float]:
    """Signed feature hashing of lower-cased words, normalised to unit length.

    Shared words land in shared buckets, so texts with overlapping wording get a high cosine
    similarity while unrelated texts stay near zero; the hash is stable across processes.
    """
    vector = [0.0] * dim
    for word in _WORD.findall(text.lower()):
        bucket = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
        vector[bucket % dim] += -1.0 if bucket >> 63 else 1.0
    norm = math.sqrt(sum(value * value for value in vector))
    if norm == 0.0:
        vector[0] = 1.0
        return vector
    return [value / norm for value in vector]


def _rough_tokens(text: str) -> int:
    return len(text) // 4


@dataclass(frozen=True)
class _Call:
    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class _Turn:
    """A reply rendered against a specific request."""

    content: str | None
    calls: tuple[_Call, ...]
    finish_reason: str

    def completion_text(self) -> str:
        return (self.content or "") + "".join(call.arguments for call in self.calls)

    def message(self) -> JsonDict:
        message: JsonDict = {"role": "assistant", "content": self.content, "refusal": None}
        if self.calls:
            message["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for call in self.calls
            ]
        return message


def _forced_tool_name(request: JsonDict) -> str | None:
    """The one function the caller insists on, as ``function_calling`` structured output does."""
    choice = request.get("tool_choice")
    tools = request.get("tools") or []
    if isinstance(choice, dict):
        name = (choice.get("function") or {}).get("name")
        return name if isinstance(name, str) else None
    if choice in ("required", "any") and len(tools) == 1:
        name = (tools[0].get("function") or {}).get("name")
        return name if isinstance(name, str) else None
    return None


def _token_limit(request: JsonDict) -> int | None:
    for key in ("max_completion_tokens", "max_tokens"):
        value = request.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def _render(reply: Reply, request: JsonDict, new_call_id: Callable[[], str]) -> _Turn:
    content: str | None = None
    calls: list[_Call] = []
    finish_reason = "stop"
    forced_tool = _forced_tool_name(request)
    structured = reply.json if reply.json is not None else reply.raw
    if structured is not None and forced_tool is not None:
        calls.append(_Call(new_call_id(), forced_tool, structured))
    elif structured is not None:
        content = structured
    elif reply.text is not None:
        content = reply.text
        limit = _token_limit(request)
        if limit is not None and len(content) > limit * 4:
            content = content[: limit * 4]
            finish_reason = "length"
    for call in reply.tool_calls:
        arguments = json.dumps(dict(call.args))
        calls.append(_Call(call.id or new_call_id(), call.name, arguments))
    if calls:
        finish_reason = "tool_calls"
    elif content is None:
        content = ""
    return _Turn(content, tuple(calls), finish_reason)


def _usage(request: JsonDict, turns: Iterable[_Turn]) -> JsonDict:
    messages = request.get("messages") or []
    prompt = "".join(_content_text(m.get("content")) for m in messages if isinstance(m, dict))
    prompt_tokens = _rough_tokens(prompt)
    completion_tokens = sum(_rough_tokens(turn.completion_text()) for turn in turns)
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


def _fixed_pieces(text: str, size: int) -> list[str]:
    return [text[start : start + size] for start in range(0, len(text), size)]


def _stream_events(
    header: JsonDict, request: JsonDict, turns: list[_Turn], usage: JsonDict
) -> Iterator[JsonDict]:
    """Chunks in the order OpenAI sends them, with small deltas so reassembly is exercised."""
    include_usage = bool((request.get("stream_options") or {}).get("include_usage"))

    def chunk(index: int, delta: JsonDict, finish_reason: str | None = None) -> JsonDict:
        choice = {"index": index, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        event = {**header, "object": "chat.completion.chunk", "choices": [choice]}
        if include_usage:
            event["usage"] = None
        return event

    for index, turn in enumerate(turns):
        opening_content = None if turn.content is None else ""
        yield chunk(index, {"role": "assistant", "content": opening_content})
        for piece in _TEXT_PIECE.findall(turn.content or ""):
            yield chunk(index, {"content": piece})
        for position, call in enumerate(turn.calls):
            call_opening = {
                "index": position,
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": ""},
            }
            yield chunk(index, {"tool_calls": [call_opening]})
            for piece in _fixed_pieces(call.arguments, _ARGUMENT_PIECE_CHARS):
                delta = {"index": position, "function": {"arguments": piece}}
                yield chunk(index, {"tool_calls": [delta]})
        yield chunk(index, {}, turn.finish_reason)
    if include_usage:
        yield {**header, "object": "chat.completion.chunk", "choices": [], "usage": usage}


def _embedding_inputs(raw: object) -> list[str]:
    """Accept every input shape the API does; token ids are hashed as if they were words."""
    if isinstance(raw, str):
        return [raw]
    if isinstance(raw, list) and raw and all(isinstance(item, int) for item in raw):
        return [" ".join(f"t{item}" for item in raw)]
    if isinstance(raw, list):
        texts: list[str] = []
        for item in raw:
            if isinstance(item, str):
                texts.append(item)
            elif isinstance(item, list):
                texts.append(" ".join(f"t{token}" for token in item))
            else:
                raise ValueError(f"unsupported embedding input item: {item!r}")
        return texts
    raise ValueError(f"unsupported embedding input: {raw!r}")


def _encode_embedding(vector: list[float], encoding_format: object) -> list[float] | str:
    """The SDK asks for base64 float32 unless told otherwise, so both forms must round-trip."""
    if encoding_format == "base64":
        return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode("ascii")
    return vector


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 128

    def __init__(self, owner: ScriptedOpenAI) -> None:
        self.owner = owner
        super().__init__(("127.0.0.1", 0), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients that hang up (timeouts, cancelled streams) are expected, not noteworthy."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    @property
    def _owner(self) -> ScriptedOpenAI:
        server = self.server
        assert isinstance(server, _Server)
        return server.owner

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output free of access logs."""

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def _dispatch(self, method: str) -> None:
        self.close_connection = True
        path = self.path.split("?", 1)[0].rstrip("/")
        try:
            body = self._read_json() if method == "POST" else {}
        except ValueError as exc:
            self._send_json(400, ScriptedError(400, f"invalid JSON body: {exc}").body())
            return
        try:
            self._route(method, path, body)
        except (BrokenPipeError, ConnectionResetError):
            return
        except Exception:
            failure = ScriptedError(500, "scripted server failed:\n" + traceback.format_exc())
            self._send_json(500, failure.body())

    def _route(self, method: str, path: str, body: JsonDict) -> None:
        owner = self._owner
        if method == "POST":
            owner._record(path, body)
        if method == "POST" and path == "/v1/chat/completions":
            self._chat(owner, body)
        elif method == "POST" and path == "/v1/embeddings":
            self._embeddings(owner, body)
        elif method == "GET" and path == "/v1/models":
            models = [_model_entry(model) for model in MODEL_IDS]
            self._send_json(200, {"object": "list", "data": models})
        elif method == "GET" and path.startswith("/v1/models/"):
            self._send_json(200, _model_entry(path.removeprefix("/v1/models/")))
        else:
            error = ScriptedError(404, f"no scripted route for {method} {path}")
            self._send_json(404, error.body())

    def _read_json(self) -> JsonDict:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b"{}"
        body = json.loads(raw)
        if not isinstance(body, dict):
            raise ValueError("body must be a JSON object")
        return body

    def _chat(self, owner: ScriptedOpenAI, request: JsonDict) -> None:
        invalid = message_order_errors(list(request.get("messages") or []))
        if invalid:  # as the real API does, before any scripted reply is used up
            self._send_json(400, ScriptedError(400, invalid[0]).body())
            return
        reply = owner._next_reply(request)
        if reply.delay > 0 and owner._stopping.wait(reply.delay):
            return
        if reply.error is not None:
            self._send_json(reply.error.status, reply.error.body())
            return
        n = request.get("n")
        choices = n if isinstance(n, int) and n > 1 else 1
        turns = [_render(reply, request, owner._new_call_id) for _ in range(choices)]
        usage = _usage(request, turns)
        header: JsonDict = {
            "id": owner._new_completion_id(),
            "created": int(time.time()),
            "model": request.get("model") or MODEL_IDS[0],
            "system_fingerprint": None,
        }
        if request.get("stream"):
            self._send_stream(_stream_events(header, request, turns, usage))
            return
        completion = {
            **header,
            "object": "chat.completion",
            "choices": [
                {
                    "index": index,
                    "message": turn.message(),
                    "logprobs": None,
                    "finish_reason": turn.finish_reason,
                }
                for index, turn in enumerate(turns)
            ],
            "usage": usage,
        }
        self._send_json(200, completion)

    def _embeddings(self, owner: ScriptedOpenAI, request: JsonDict) -> None:
        try:
            texts = _embedding_inputs(request.get("input"))
        except ValueError as exc:
            self._send_json(400, ScriptedError(400, str(exc)).body())
            return
        dimensions = request.get("dimensions")
        dim = dimensions if isinstance(dimensions, int) else owner.embedding_dim
        encoding = request.get("encoding_format")
        data = [
            {
                "object": "embedding",
                "index": index,
                "embedding": _encode_embedding(hashed_embedding(text, dim), encoding),
            }
            for index, text in enumerate(texts)
        ]
        tokens = sum(_rough_tokens(text) for text in texts)
        body = {
            "object": "list",
            "data": data,
            "model": request.get("model") or "text-embedding-3-small",
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }
        self._send_json(200, body)

    def _send_json(self, status: int, body: JsonDict) -> None:
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(payload)

    def _send_stream(self, events: Iterable[JsonDict]) -> None:
        """Server-sent events; the body ends when the connection closes."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for event in events:
            self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
            self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


def _model_entry(model: str) -> JsonDict:
    return {"id": model, "object": "model", "created": 0, "owned_by": "scripted"}


def _tool_call(spec: Mapping[str, Any] | ToolCall) -> ToolCall:
    if isinstance(spec, ToolCall):
        return spec
    return ToolCall(name=spec["name"], args=dict(spec.get("args") or {}), id=spec.get("id"))


class ScriptedOpenAI:
    """OpenAI-compatible HTTP server on 127.0.0.1 whose chat replies come from a FIFO script.

    Chat requests consume queued replies in order and fall back to the default responder once
    the queue is empty; embeddings are always :func:`hashed_embedding`. Every POST body is
    recorded so tests can assert on what the client actually sent.
    """

    def __init__(
        self,
        *,
        embedding_dim: int = DEFAULT_EMBEDDING_DIM,
        default: Responder = echo_responder,
    ) -> None:
        self.embedding_dim = embedding_dim
        self._default = default
        self._queue: deque[Reply] = deque()
        self._records: list[tuple[str, JsonDict]] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> Self:
        if self._server is not None:
            return self
        self._stopping.clear()
        self._server = _Server(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="scripted-openai",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Shut down and wake any delayed reply so nothing outlives the test."""
        server, thread = self._server, self._thread
        self._server, self._thread = None, None
        self._stopping.set()
        if server is not None:
            server.shutdown()
            server.server_close()
        if thread is not None:
            thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("ScriptedOpenAI is not running; call start() first")
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def enqueue(self, *replies: Reply) -> None:
        with self._lock:
            self._queue.extend(replies)

    def reply(self, text: str, *, delay: float = 0.0) -> None:
        self.enqueue(Reply(text=text, delay=delay))

    def reply_tool_calls(
        self,
        calls: Iterable[Mapping[str, Any] | ToolCall],
        *,
        text: str | None = None,
        delay: float = 0.0,
    ) -> None:
        """Queue a turn that calls tools; dicts take ``name``, ``args`` and optional ``id``."""
        tool_calls = tuple(_tool_call(call) for call in calls)
        self.enqueue(Reply(text=text, tool_calls=tool_calls, delay=delay))

    def reply_json(self, obj: Any, *, delay: float = 0.0) -> None:
        """Queue structured output that works for both json_schema and function calling."""
        self.enqueue(Reply(json=json.dumps(obj), delay=delay))

    def reply_raw_content(self, content: str, *, delay: float = 0.0) -> None:
        """Queue output sent verbatim, e.g. malformed JSON that parsers must reject."""
        self.enqueue(Reply(raw=content, delay=delay))

    def reply_error(
        self,
        status: int,
        message: str = "scripted failure",
        *,
        error_type: str | None = None,
        delay: float = 0.0,
    ) -> None:
        self.enqueue(Reply(error=ScriptedError(status, message, error_type), delay=delay))

    def reply_delay(self, seconds: float, then: Reply | str | None = None) -> None:
        """Queue a slow turn; without ``then`` the default responder answers after the wait."""
        follow = Reply(text=then) if isinstance(then, str) else (then or Reply())
        self.enqueue(dataclasses.replace(follow, delay=seconds))

    def set_default(self, responder: Responder) -> None:
        with self._lock:
            self._default = responder

    def reset(self) -> None:
        """Forget script, records and custom default, so one server can serve many tests."""
        with self._lock:
            self._queue.clear()
            self._records.clear()
            self._default = echo_responder

    @property
    def pending(self) -> int:
        """Scripted replies not yet consumed; zero means the test used its whole script."""
        with self._lock:
            return len(self._queue)

    @property
    def requests(self) -> list[JsonDict]:
        with self._lock:
            return [body for _, body in self._records]

    @property
    def chat_requests(self) -> list[JsonDict]:
        return self._bodies_for("/v1/chat/completions")

    @property
    def embedding_requests(self) -> list[JsonDict]:
        return self._bodies_for("/v1/embeddings")

    def last_messages(self) -> list[JsonDict]:
        """Messages of the most recent chat request, i.e. the prompt the model last saw."""
        chats = self.chat_requests
        if not chats:
            raise LookupError("no chat completion request has been received")
        messages: list[JsonDict] = chats[-1].get("messages") or []
        return messages

    def _bodies_for(self, path: str) -> list[JsonDict]:
        with self._lock:
            return [body for recorded, body in self._records if recorded == path]

    def _record(self, path: str, body: JsonDict) -> None:
        with self._lock:
            self._records.append((path, body))

    def _next_reply(self, request: JsonDict) -> Reply:
        with self._lock:
            scripted = self._queue.popleft() if self._queue else None
            default = self._default
        if scripted is None:
            return default(request)
        if scripted.has_payload:
            return scripted
        return dataclasses.replace(default(request), delay=scripted.delay)

    def _new_call_id(self) -> str:
        return f"call_scripted_{next(self._ids)}"

    def _new_completion_id(self) -> str:
        return f"chatcmpl-scripted-{next(self._ids)}"
