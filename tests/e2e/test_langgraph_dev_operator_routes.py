"""`langgraph dev` as a stranger with no key, a tenant with one, and a web page in a browser.

The server's own routes (`/internal/*`, `/metrics`, `/deploy`) answer only an operator's key;
Studio's header without a token is nobody unless the operator opted in; and a browser lets
only Studio's origin and localhost call the API across origins.
"""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.support.langgraph_dev import ALICE_KEY, BOB_KEY, OPS_KEY, client_for, langgraph_dev

TIMEOUT_S = 30


def _bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_operator_routes_need_an_operator_key(served_module: str) -> None:
    alice = client_for(served_module, ALICE_KEY)
    thread = alice.threads.create(metadata={"note": "locker code 4471"})["thread_id"]
    probes = [
        ("GET", f"/internal/debug/thread/{thread}"),
        ("POST", "/internal/truncate"),
        ("GET", "/metrics"),
        ("GET", "/deploy"),
        ("GET", "/deploy/some-operation/stream"),
    ]
    with httpx.Client(base_url=served_module, timeout=TIMEOUT_S) as http:
        for method, path in probes:
            for headers, status in (({}, 401), (_bearer(BOB_KEY), 403), (_bearer(ALICE_KEY), 403)):
                response = http.request(method, path, headers=headers)
                assert response.status_code == status, (method, path, headers, response.text)
                assert "4471" not in response.text
        assert http.get("/metrics", headers=_bearer(OPS_KEY)).status_code == 200
        raw = http.get(f"/internal/debug/thread/{thread}", headers=_bearer(OPS_KEY))
        assert raw.status_code == 200, raw.text
    assert alice.threads.get(thread)["metadata"]["note"] == "locker code 4471"  # not wiped


def test_studio_header_without_a_token_is_nobody_by_default(served_module: str) -> None:
    studio = {"x-auth-scheme": "langsmith"}
    with httpx.Client(base_url=served_module, timeout=TIMEOUT_S) as http:
        created = http.post("/threads", json={}, headers=studio)
        assert created.status_code == 401, created.text
        searched = http.post("/threads/search", json={}, headers=studio)
        assert searched.status_code == 401, searched.text
        put = http.put(
            "/store/items",
            json={"namespace": ["default", "local-user"], "key": "k", "value": {"text": "x"}},
            headers=studio,
        )
        assert put.status_code == 401, put.text


def test_cors_admits_studio_and_localhost_only(served_module: str) -> None:
    def preflight(origin: str) -> httpx.Response:
        return httpx.options(
            f"{served_module}/threads",
            headers={
                "Origin": origin,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "x-auth-scheme,content-type",
            },
            timeout=TIMEOUT_S,
        )

    for origin in ("https://smith.langchain.com", "http://localhost:5173", "http://127.0.0.1:3000"):
        allowed = preflight(origin)
        assert allowed.status_code == 200, (origin, allowed.text)
        assert allowed.headers.get("access-control-allow-origin") == origin
    for origin in ("https://evil.example", "http://localhost.evil.example", "null"):
        refused = preflight(origin)
        assert refused.status_code >= 400, origin
        assert "access-control-allow-origin" not in refused.headers, origin
    simple = httpx.post(
        f"{served_module}/threads/search",
        json={},
        headers={"Origin": "https://evil.example", **_bearer(ALICE_KEY)},
        timeout=TIMEOUT_S,
    )
    assert "access-control-allow-origin" not in simple.headers


def test_studio_acts_as_the_local_identity_when_opted_in(
    module_database_uri: str, tmp_path: Path
) -> None:
    env = {
        "RECOLLECT_DATABASE_URI": module_database_uri,
        "RECOLLECT_STUDIO_IDENTITY": "on",  # what `make dev` sets
        "RECOLLECT_ORG_ID": "acme",
        "RECOLLECT_USER_ID": "ana",
    }
    with langgraph_dev(env, tmp_path / "dev.log") as url:
        studio = {"x-auth-scheme": "langsmith", "Origin": "https://smith.langchain.com"}
        created = httpx.post(f"{url}/threads", json={}, headers=studio, timeout=TIMEOUT_S)
        assert created.status_code == 200, created.text
        assert created.json()["metadata"]["owner"] == "acme/ana"
        assert created.headers["access-control-allow-origin"] == "https://smith.langchain.com"
        metrics = httpx.get(f"{url}/metrics", headers=studio, timeout=TIMEOUT_S)
        assert metrics.status_code == 401  # Studio's identity is a user's, not the operator's
