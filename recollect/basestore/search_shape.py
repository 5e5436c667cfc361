"""A served store search must name its `namespace_prefix`; without one, LangGraph's route fails
with a 500 before any `Auth` handler runs. This middleware (installed by `graphs/app.py`)
answers such a request with one 422 line instead, and passes every other request untouched."""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

SEARCH_PATH = "/store/items/search"
MAX_BODY_BYTES = 1_000_000
"""Larger search bodies are passed on as they are (LangGraph refuses or serves them)."""


def search_refusal(body: bytes) -> str | None:
    """Why a search body must be refused, if it names no namespace prefix."""
    try:
        payload = json.loads(body or b"{}")
    except ValueError:
        return "the search body is not JSON"
    if not isinstance(payload, dict) or not isinstance(payload.get("namespace_prefix"), list):
        return 'a store search needs "namespace_prefix": a list of strings (it may be empty)'
    return None


class StoreSearchShape:
    """Pure ASGI middleware: read a store search's body, refuse it if it has no prefix, else
    hand the same bytes on."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != SEARCH_PATH:
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        more, size = True, 0
        while more and size <= MAX_BODY_BYTES:
            message = await receive()
            if message["type"] != "http.request":
                await self.app(scope, _replay([message]), send)
                return
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            more = bool(message.get("more_body"))
        body = b"".join(chunks)
        refused = None if more else search_refusal(body)
        if refused is None:
            replayed = {"type": "http.request", "body": body, "more_body": more}
            await self.app(scope, _replay([replayed], receive), send)
            return
        reply = json.dumps({"detail": refused}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(reply))]
        await send({"type": "http.response.start", "status": 422, "headers": headers})
        await send({"type": "http.response.body", "body": reply})


def _replay(messages: list[Message], then: Receive | None = None) -> Receive:
    """A `receive` that yields the messages already read, then the rest of the stream."""
    pending = list(messages)

    async def receive() -> Message:
        if pending:
            return pending.pop(0)
        if then is None:
            return {"type": "http.disconnect"}
        return await then()

    return receive
