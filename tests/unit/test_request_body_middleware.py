"""The body-reading middleware in front of the served API, through a real ASGI app: a refused
request gets its one JSON line, and every other request reaches the route with its body
byte for byte."""

from __future__ import annotations

import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.testclient import TestClient

from recollect.auth.thread_ids import ServerChosenThreadIds
from recollect.basestore.search_shape import StoreSearchShape


async def echo(request: Request) -> Response:
    return Response(await request.body(), media_type="application/octet-stream")


KEY = {"Authorization": "Bearer alice-key-0123456789"}
STUDIO = {"x-auth-scheme": "langsmith"}
PATHS = ["/threads", "/threads/t-1/runs/wait", "/store/items/search"]


@pytest.fixture
def client(monkeypatch: pytest.MonkeyPatch) -> TestClient:
    monkeypatch.delenv("RECOLLECT_CALLER_THREAD_IDS", raising=False)
    routes = [Route(path, echo, methods=["POST"]) for path in PATHS]
    middleware = [Middleware(ServerChosenThreadIds), Middleware(StoreSearchShape)]
    return TestClient(Starlette(routes=routes, middleware=middleware))


@pytest.mark.parametrize(
    ("path", "body", "status"),
    [
        ("/threads", b'{"thread_id": "someone-elses"}', 403),
        ("/threads/t-1/runs/wait", b'{"if_not_exists": "create"}', 403),
        ("/store/items/search", b'{"query": "x"}', 422),
    ],
)
def test_a_refused_request_gets_one_json_line(
    client: TestClient, path: str, body: bytes, status: int
) -> None:
    reply = client.post(path, content=body, headers=KEY)
    assert reply.status_code == status
    assert set(reply.json()) == {"detail"}


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/threads", b'{"metadata": {"topic": "caf\xc3\xa9"}}'),
        ("/threads/t-1/runs/wait", b'{"assistant_id": "agent", "input": {}}'),
        ("/store/items/search", b'{"namespace_prefix": [], "query": "' + b"x" * 50_000 + b'"}'),
        ("/threads", b"not json"),
    ],
)
def test_any_other_request_reaches_the_route_with_its_body(
    client: TestClient, path: str, body: bytes
) -> None:
    reply = client.post(path, content=body, headers=KEY)
    assert reply.status_code == 200
    assert reply.content == body


def test_a_create_with_no_key_is_left_to_the_apis_own_refusal(client: TestClient) -> None:
    """With no credential the request reaches the API, whose `Auth` answers 401."""
    body = b'{"thread_id": "someone-elses"}'
    assert client.post("/threads", content=body).content == body
    assert client.post("/threads", content=body, headers=STUDIO).status_code == 403
