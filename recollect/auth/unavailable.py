"""A request that got no database connection is answered 503 with the line that names why
(`recollect.store.refusal`: slots taken, a login refused, a server down, a pool full), not
LangGraph's 500 "internal error". A run's own failure reaches its client in the run's result,
which LangGraph already shows as that line (the error is a `TimeoutError`)."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from recollect.auth.request_body import answer
from recollect.store.errors import NoConnectionError


class DatabaseUnavailable:
    """Pure ASGI middleware: `NoConnectionError` before the response started becomes a 503."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, watched)
        except NoConnectionError as exc:
            if started:
                raise
            await answer(send, 503, str(exc))
