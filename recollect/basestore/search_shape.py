"""A served store search must name its `namespace_prefix`; without one, LangGraph's route fails
with a 500 before any `Auth` handler runs. This middleware (installed by `graphs/app.py`)
answers such a request with one 422 line instead, and passes every other request untouched."""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Receive, Scope, Send

from recollect.auth.request_body import answer, read_body, replay, replay_body

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
        read = await read_body(receive, MAX_BODY_BYTES)
        if read.other is not None:
            await self.app(scope, replay([read.other]), send)
            return
        refused = None if read.more else search_refusal(read.body)
        if refused is None:
            await self.app(scope, replay_body(read, receive), send)
            return
        await answer(send, 422, refused)
