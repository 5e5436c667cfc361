"""`langgraph dev` asked in ways that used to tell a caller more than a refusal should.

Two different credentials in one request are refused, not resolved by whichever header the
server's map kept. A thread id is the server's to choose: creating a thread (or a run that
creates one) under an id one picked answers the same whether the id is free, one's own or
another tenant's, so nobody learns which ids exist. A store item with an absurd ttl or a
`learned_at` in the future is refused before anything is written, and so is any body holding
text the database cannot store (a NUL) or nested without bound: one line, and the thread goes
on.
"""

from __future__ import annotations

import json
import uuid

import httpx

from tests.support.langgraph_dev import ALICE_KEY, BOB_KEY, GINA_KEY, client_for, status_of

TIMEOUT_S = 30
HELLO = {"messages": [{"role": "human", "content": "hi"}]}


def _bearer(key: str) -> tuple[str, str]:
    return ("Authorization", f"Bearer {key}")


def test_two_different_credentials_are_refused(served_module: str) -> None:
    ambiguous = [
        [_bearer(ALICE_KEY), _bearer(BOB_KEY)],
        [_bearer(BOB_KEY), _bearer(ALICE_KEY)],
        [_bearer(ALICE_KEY), ("Authorization", "Bearer not-a-key-0123456789")],
        [_bearer(ALICE_KEY), ("x-api-key", "one-0123456789abcdef"), ("x-api-key", "two")],
    ]
    with httpx.Client(base_url=served_module, timeout=TIMEOUT_S) as http:
        for headers in ambiguous:
            for method, path in (("POST", "/threads/search"), ("GET", "/metrics")):
                response = http.request(method, path, headers=headers, json={})
                assert response.status_code == 401, (headers, path, response.text)
                assert "more than one" in response.text
        repeated = [_bearer(ALICE_KEY), _bearer(ALICE_KEY)]
        assert http.post("/threads/search", headers=repeated, json={}).status_code == 200


def test_a_thread_id_one_picks_says_nothing_about_who_has_it(served_module: str) -> None:
    alice = client_for(served_module, ALICE_KEY)
    alices = alice.threads.create()["thread_id"]
    bob = client_for(served_module, BOB_KEY)
    bobs = bob.threads.create()["thread_id"]
    free = str(uuid.uuid4())
    answers = {}
    for caller, key in (("bob", BOB_KEY), ("gina", GINA_KEY)):
        with httpx.Client(
            base_url=served_module, timeout=TIMEOUT_S, headers=[_bearer(key)]
        ) as http:
            for label, thread in (("alice's", alices), ("bob's", bobs), ("free", free)):
                for if_exists in ("raise", "do_nothing"):
                    body = {"thread_id": thread, "if_exists": if_exists}
                    answers[caller, label, "create", if_exists] = http.post("/threads", json=body)
                for route in ("runs", "runs/wait", "runs/stream"):
                    body = {"assistant_id": "agent", "input": HELLO, "if_not_exists": "create"}
                    answer = http.post(f"/threads/{thread}/{route}", json=body)
                    answers[caller, label, route, "create"] = answer
    statuses = {k: r.status_code for k, r in answers.items()}
    assert set(statuses.values()) == {403}, statuses
    assert len({r.text for r in answers.values()}) == 1
    assert free not in [t["thread_id"] for t in bob.threads.search(limit=100)]
    assert status_of(lambda: alice.threads.get(free)) == 404
    assert alice.runs.list(alices) == []
    assert bob.threads.create()["thread_id"] not in (alices, bobs, free)  # no id: served as ever


def test_a_store_item_out_of_bounds_is_refused_and_not_written(served_module: str) -> None:
    alice = client_for(served_module, ALICE_KEY)
    namespace = ("acme", "alice", "facts", "bounds")
    cases = [
        ({"text": "Parks in bay 12"}, 5e9),
        ({"text": "Parks in bay 12"}, 1e308),
        ({"text": "Parks in bay 12", "learned_at": "9999-12-31"}, None),
    ]
    for number, (value, ttl) in enumerate(cases):
        key = f"case-{number}"
        status = status_of(
            lambda k=key, v=value, t=ttl: alice.store.put_item(namespace, k, v, ttl=t)  # type: ignore[arg-type]
        )
        assert 400 <= status < 500, (value, ttl, status)
        assert alice.store.get_item(namespace, key) is None
    assert alice.store.search_items(namespace)["items"] == []


def _nested(depth: int) -> object:
    """`depth` lists inside each other, as the JSON a caller might send."""
    return json.loads("[" * depth + "]" * depth)


def test_text_the_database_cannot_store_is_one_line_and_the_thread_goes_on(
    served_module: str,
) -> None:
    alice = client_for(served_module, ALICE_KEY)
    thread = alice.threads.create()["thread_id"]
    with httpx.Client(
        base_url=served_module, timeout=TIMEOUT_S, headers=[_bearer(ALICE_KEY)]
    ) as http:
        nul = {"messages": [{"role": "human", "content": "tea\u0000time"}]}
        refused = http.post(
            f"/threads/{thread}/runs/wait", json={"assistant_id": "agent", "input": nul}
        )
        assert refused.status_code == 422, refused.text
        assert "NUL" in refused.json()["detail"]
        assert "\n" not in refused.json()["detail"]
        item = {"namespace": ["acme", "alice", "facts"], "key": "k", "value": {"text": "Bob\u0000"}}
        stored = http.put("/store/items", json=item)
        assert stored.status_code == 422, stored.text
    reply = alice.runs.wait(thread, "agent", input=HELLO)
    assert reply["messages"][-1]["type"] == "ai"
    assert alice.threads.get(thread)["status"] == "idle"


def test_json_nested_without_bound_is_one_line_not_a_500(served_module: str) -> None:
    alice = client_for(served_module, ALICE_KEY)
    thread = alice.threads.create()["thread_id"]
    with httpx.Client(
        base_url=served_module, timeout=TIMEOUT_S, headers=[_bearer(ALICE_KEY)]
    ) as http:
        deep = {"metadata": {"x": "__NEST__"}}
        metadata = json.dumps(deep).replace('"__NEST__"', "[" * 50_000 + "]" * 50_000)
        headers = {"content-type": "application/json"}
        answers = [
            http.post("/threads", content=metadata, headers=headers),
            http.patch(f"/threads/{thread}", content=metadata, headers=headers),
            http.post(
                f"/threads/{thread}/runs/wait",
                json={"assistant_id": "agent", "input": {"messages": _nested(200)}},
            ),
        ]
        for answer in answers:
            assert answer.status_code == 422, answer.text[:300]
            assert "nested deeper than" in answer.json()["detail"]
        assert http.get("/ok").status_code == 200
