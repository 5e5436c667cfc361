"""Request bodies bounded before any work: nesting depth, size, and text the database can
store (`recollect.store.storable`), on every route that takes a body (runs, threads and their
metadata, store items, assistants, crons).

A JSON body nested 50,000 deep used to stop the first `json.loads` that met it with a
`RecursionError` (a 500), and a NUL in a message reached Postgres after its checkpoint was
written, which refused it on every later turn of the thread. This middleware (`graphs/app.py`)
answers both with one line before LangGraph's route sees the request: 413 for a body over
`MAX_BODY_BYTES`, 422 for one nested deeper than `MAX_JSON_DEPTH` or holding a NUL or an
unpaired surrogate in any string (key or value). A request without credentials passes on to
the API's own 401 first.
"""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Receive, Scope, Send

from recollect.auth.request_body import answer, read_body, replay, replay_body
from recollect.auth.thread_ids import carries_credentials
from recollect.store.storable import MAX_JSON_DEPTH, json_refusal

MAX_BODY_BYTES = 16_000_000
"""About 4,000 messages at the message limit; a larger body is refused 413 unread."""
WITH_BODY = frozenset({"POST", "PUT", "PATCH"})


def body_refusal(body: bytes) -> str | None:
    """Why `body` is refused (one line), or None to pass it on; a body that is not JSON is
    the API's own 422."""
    if not body.strip():
        return None
    try:
        payload = json.loads(body)
    except RecursionError:
        return f"the JSON is nested deeper than {MAX_JSON_DEPTH} levels; nothing was saved"
    except ValueError:
        return None
    refused = json_refusal(payload)
    return f"{refused}; nothing was saved" if refused else None


class BoundedJson:
    """Pure ASGI middleware: a body too large (413), too deep or unstorable (422) is refused
    with one line; any other passes on unchanged."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] not in WITH_BODY
            or not carries_credentials(scope)
        ):
            await self.app(scope, receive, send)
            return
        read = await read_body(receive, MAX_BODY_BYTES)
        if read.other is not None:
            await self.app(scope, replay([read.other]), send)
        elif read.more:
            await answer(send, 413, f"the request body is over {MAX_BODY_BYTES:,} bytes")
        elif (refused := body_refusal(read.body)) is not None:
            await answer(send, 422, refused)
        else:
            await self.app(scope, replay_body(read, receive), send)
