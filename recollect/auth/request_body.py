"""Reading a request's body in pure ASGI middleware, and handing it on unchanged.

Middleware that must see a body before LangGraph's route does (`thread_ids`, the store's
`search_shape`) reads it here, up to a limit, then replays the same messages to the app."""

from __future__ import annotations

import json
from dataclasses import dataclass

from starlette.types import Message, Receive, Send


@dataclass(frozen=True)
class ReadBody:
    """What reading gave: the bytes, whether more was left unread (the limit was passed), and
    a message other than a body part that ended the reading (a disconnect)."""

    body: bytes
    more: bool
    other: Message | None = None


async def read_body(receive: Receive, limit: int) -> ReadBody:
    """The body's parts joined, read until it ends or passes `limit` bytes."""
    chunks: list[bytes] = []
    more, size = True, 0
    while more and size <= limit:
        message = await receive()
        if message["type"] != "http.request":
            return ReadBody(b"".join(chunks), more, message)
        chunks.append(message.get("body", b""))
        size += len(chunks[-1])
        more = bool(message.get("more_body"))
    return ReadBody(b"".join(chunks), more)


def replay(messages: list[Message], then: Receive | None = None) -> Receive:
    """A `receive` that yields the messages already read, then the rest of the stream."""
    pending = list(messages)

    async def receive() -> Message:
        if pending:
            return pending.pop(0)
        if then is None:
            return {"type": "http.disconnect"}
        return await then()

    return receive


def replay_body(read: ReadBody, receive: Receive) -> Receive:
    """The read body as one message, then whatever was left unread."""
    return replay([{"type": "http.request", "body": read.body, "more_body": read.more}], receive)


async def answer(send: Send, status: int, detail: str) -> None:
    """A JSON `{"detail": ...}` reply, as LangGraph's own refusals look."""
    reply = json.dumps({"detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(reply))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": reply})
