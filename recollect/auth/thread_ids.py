"""Thread ids are the server's to choose, so a create cannot probe another tenant's ids.

LangGraph answers `POST /threads {"thread_id": X}` with 409 when X exists, whoever owns it,
and 200 when it is free; a run on `/threads/X/runs` with `if_not_exists: "create"` answers 404
for another's X and creates a free one. Either tells a caller that someone else's thread X
exists. The `Auth` handler cannot tell a caller's id from one the server generated (the server
fills the id in before it asks), so this middleware (`graphs/app.py`) refuses both forms with
one 403 whatever X is (free, one's own, or another's), before the server looks X up. A client
creates a thread with `POST /threads` and no id, and uses the id it gets back.

A deployment whose clients must name their threads (ids derived from another system's
conversation ids) opts in with `RECOLLECT_CALLER_THREAD_IDS=on`, accepting that those answers
tell a caller whether an id is taken; ownership still decides every read and write.
"""

from __future__ import annotations

import json
import os
import re

from starlette.types import ASGIApp, Receive, Scope, Send

from recollect.auth.request_body import answer, read_body, replay, replay_body

THREADS_PATH = "/threads"
RUN_ON_THREAD = re.compile(r"^/threads/[^/]+/runs(/stream|/wait)?/?$")
MAX_BODY_BYTES = 16_000_000
"""A larger create body is refused 413 rather than passed on unread."""
CALLER_THREAD_IDS_ENV = "RECOLLECT_CALLER_THREAD_IDS"
CALLER_CHOSEN_ID = (
    "thread ids are chosen by the server: create a thread with POST /threads and no "
    "thread_id, then use the id it returns"
)


def caller_chosen_thread(path: str, body: bytes) -> bool:
    """Whether a create names its own thread id (a thread create with `thread_id`, or a run
    that would create its thread: `if_not_exists: "create"`)."""
    try:
        payload = json.loads(body or b"{}")
    except ValueError:
        return False  # the server answers a body that is not JSON with its own 422
    if not isinstance(payload, dict):
        return False
    if path.rstrip("/") == THREADS_PATH:
        return payload.get("thread_id") not in (None, "")
    return bool(RUN_ON_THREAD.match(path)) and payload.get("if_not_exists") == "create"


def caller_ids_allowed() -> bool:
    """Whether the deployment lets callers name their threads (`RECOLLECT_CALLER_THREAD_IDS`)."""
    return os.environ.get(CALLER_THREAD_IDS_ENV, "").strip().lower() == "on"


CREDENTIAL_HEADERS = frozenset({b"authorization", b"x-api-key", b"x-auth-scheme"})


def carries_credentials(scope: Scope) -> bool:
    """Whether the request says who sends it; one that does not is the API's to refuse (401),
    before anything about its body."""
    return any(name.lower() in CREDENTIAL_HEADERS for name, _ in scope.get("headers", []))


def _creates_thread(scope: Scope) -> bool:
    path = scope["path"]
    return path.rstrip("/") == THREADS_PATH or bool(RUN_ON_THREAD.match(path))


class ServerChosenThreadIds:
    """Pure ASGI middleware: a create that names its thread id is a 403, whatever the id."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.allowed = caller_ids_allowed()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.allowed or scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        if not _creates_thread(scope) or not carries_credentials(scope):
            await self.app(scope, receive, send)  # a request with no key: the API's 401
            return
        read = await read_body(receive, MAX_BODY_BYTES)
        if read.other is not None:
            await self.app(scope, replay([read.other]), send)
        elif read.more:
            await answer(send, 413, "the request body is too large")
        elif caller_chosen_thread(scope["path"], read.body):
            await answer(send, 403, CALLER_CHOSEN_ID)
        else:
            await self.app(scope, replay_body(read, receive), send)
