"""A request names one credential or is refused.

A request with two `Authorization` (or two `x-api-key`) headers that differ is ambiguous:
the server's header map keeps one of them (the last), a proxy in front may have checked the
other, and a log shows either. Such a request is refused 401 before any route or `Auth`
handler sees it, whatever its path. Repeating the same value is harmless and passes.
"""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Receive, Scope, Send

CREDENTIAL_HEADERS = (b"authorization", b"x-api-key")


def ambiguous_credential(headers: list[tuple[bytes, bytes]]) -> str | None:
    """The header named more than once with different values, if there is one."""
    for name in CREDENTIAL_HEADERS:
        values = {value.strip() for key, value in headers if key.lower() == name}
        if len(values) > 1:
            return name.decode()
    return None


class OneCredential:
    """Pure ASGI middleware: two differing credentials in one request are a 401."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        header = ambiguous_credential(list(scope.get("headers", [])))
        if header is None:
            await self.app(scope, receive, send)
            return
        detail = f"the request carries more than one {header} header: send exactly one"
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008, "reason": detail})
            return
        body = json.dumps({"detail": detail}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
