"""The server's own routes, closed to everyone but an operator's key.

`langgraph dev` and the Platform serve routes beside the API that LangGraph's `Auth` never
sees: `/metrics`, and in `langgraph dev` `/internal/*` (a raw thread of any tenant, a wipe of
every thread and assistant) and `/deploy` (deploys the project with the operator's LangSmith
key). They act on every tenant at once, so no tenant's key reaches them: only a key that
carries the `operator` permission does. This middleware runs in front of everything the server
serves (`langgraph.json` → `http.app`), before the routing that skips `Auth`, and asks the same
`authenticate` the API uses, so swapping that for a JWT check covers these routes too.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

from starlette.types import ASGIApp, Receive, Scope, Send

from recollect.auth.api_keys import AuthenticationError
from recollect.auth.identity import OPERATOR, Identity

Identify = Callable[[str | None], Awaitable[Identity | None]]
"""`Authorization` header → the caller; raises `AuthenticationError` (its message is the one
line the caller sees) or returns None when there is none."""

OPERATOR_PREFIXES = ("/internal", "/deploy", "/metrics")
"""Path prefixes (a whole segment each) that need an operator's key."""


def is_operator_route(path: str) -> bool:
    """Whether a request path is one of the server's own routes (`/metrics`, `/metrics/...`,
    not `/metricsfoo`)."""
    normal = "/" + path.strip("/")
    return any(normal == p or normal.startswith(p + "/") for p in OPERATOR_PREFIXES)


async def refusal(authorization: str | None, identify: Identify) -> tuple[int, str] | None:
    """The status and one-line reason an operator route is refused with, if it is."""
    try:
        identity = await identify(authorization)
    except AuthenticationError as exc:
        return 401, str(exc)
    if identity is None:
        return 401, "not authenticated"
    if OPERATOR not in identity.permissions:
        return 403, "this route is the server operator's: it needs a key with 'operator'"
    return None


class OperatorRoutes:
    """Pure ASGI middleware: operator routes need an operator's key; the rest pass through."""

    def __init__(self, app: ASGIApp, identify: Identify) -> None:
        self.app = app
        self.identify = identify

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or not is_operator_route(scope["path"]):
            await self.app(scope, receive, send)
            return
        authorizations = [v for k, v in scope.get("headers", []) if k.lower() == b"authorization"]
        header = authorizations[0].decode("latin-1") if len(authorizations) == 1 else None
        refused = await refusal(header, self.identify)
        if refused is None:
            await self.app(scope, receive, send)
            return
        status, detail = refused
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008, "reason": detail})
            return
        body = json.dumps({"detail": detail}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
