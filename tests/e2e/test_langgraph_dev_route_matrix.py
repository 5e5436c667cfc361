"""Every route `langgraph dev` serves, called by everyone who must not reach Alice's things.

The routes come from the running server's OpenAPI document (every path and method), plus the
server's own routes it leaves out of it, so a route a later LangGraph release adds is probed
without editing this file. Alice owns a thread with a finished run, a custom assistant, a cron
and a store item, each holding a secret. Each route is called with no key, with Bob's key (her
organisation) and with Gina's (another organisation): path parameters name Alice's resources,
and each write or search is sent twice, empty and aimed at her (her ids, her namespace, her
owner stamp). No answer may be a 500, no 2xx may carry anything of hers, and afterwards all of
it is as she left it.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.support.langgraph_dev import ALICE_KEY, BOB_KEY, GINA_KEY, client_for

RUN = uuid.uuid4().hex[:12]
"""Makes what Alice owns unique: `langgraph dev` keeps threads and crons between starts."""
SECRET = f"PIN 7311 under the mat {RUN}"
METHODS = ("get", "post", "put", "patch", "delete")
UNLISTED = {
    "/internal/debug/thread/{thread_id}": ("get",),
    "/internal/truncate": ("post",),
    "/metrics": ("get",),
    "/deploy": ("get",),
    "/deploy/{operation_id}/stream": ("get",),
}
"""The server's own routes, which its OpenAPI document does not list."""
TIMEOUT_S = 30
NOT_IMPLEMENTED = 501
"""What the server answers everyone, owner included, for a route our checkpointer does not
support (`/threads/{id}/storage`): no data, and no failure of ours."""
CALLERS = {"no key": None, "same org": BOB_KEY, "other org": GINA_KEY}


@dataclass(frozen=True)
class Alices:
    """What Alice owns, by id, and what a 2xx must never show."""

    thread_id: str
    run_id: str
    assistant_id: str
    cron_id: str
    checkpoint_id: str
    namespace: tuple[str, ...]
    key: str

    def path_values(self) -> dict[str, str]:
        return {
            "thread_id": self.thread_id,
            "run_id": self.run_id,
            "assistant_id": self.assistant_id,
            "cron_id": self.cron_id,
            "checkpoint_id": self.checkpoint_id,
        }

    def markers(self) -> tuple[str, ...]:
        return (self.thread_id, self.run_id, self.assistant_id, self.cron_id, SECRET, self.key)

    def aimed_body(self) -> dict[str, Any]:
        """A request body naming everything of hers a route might take."""
        return {
            **self.path_values(),
            "thread_ids": [self.thread_id],
            "metadata": {"owner": "acme/alice"},
            "namespace": list(self.namespace),
            "namespace_prefix": list(self.namespace[:2]),
            "key": self.key,
            "value": {"text": "overwritten"},
            "if_exists": "do_nothing",
        }

    def aimed_query(self) -> dict[str, str]:
        return {"namespace": ".".join(self.namespace), "key": self.key, **self.path_values()}


@pytest.fixture(scope="module")
def alices(served_module: str) -> Alices:
    alice = client_for(served_module, ALICE_KEY)
    thread = alice.threads.create(metadata={"note": SECRET})["thread_id"]
    alice.runs.wait(
        thread,
        "agent",
        input={"messages": [{"role": "human", "content": f"remember: {SECRET}"}]},
        context={"extract_after_idle_s": 3600},
    )
    [run] = alice.runs.list(thread)
    assistant = alice.assistants.create("agent", context={"system_prompt": SECRET})
    cron = alice.crons.create_for_thread(
        thread,
        "agent",
        schedule="0 0 1 1 *",
        input={"messages": [{"role": "human", "content": SECRET}]},
    )
    namespace = ("acme", "alice", "facts")
    alice.store.put_item(namespace, f"locker-{RUN}", {"text": f"Her {SECRET}"})
    checkpoint = alice.threads.get_state(thread)["checkpoint"]["checkpoint_id"]
    return Alices(
        thread_id=thread,
        run_id=run["run_id"],
        assistant_id=str(assistant["assistant_id"]),
        cron_id=str(cron["cron_id"]),
        checkpoint_id=checkpoint,
        namespace=namespace,
        key=f"locker-{RUN}",
    )


def _routes(url: str) -> list[tuple[str, str]]:
    spec = httpx.get(f"{url}/openapi.json", timeout=TIMEOUT_S).json()
    listed = {
        (path, method)
        for path, operations in spec["paths"].items()
        for method in operations
        if method in METHODS
    }
    unlisted = {(path, method) for path, methods in UNLISTED.items() for method in methods}
    return sorted(listed | unlisted)


def _fill(path: str, values: dict[str, str]) -> str:
    return re.sub(r"\{([^}]+)\}", lambda m: values.get(m.group(1), "x"), path)


def test_no_route_gives_anything_of_alices_to_anyone_else(
    served_module: str, alices: Alices
) -> None:
    routes = _routes(served_module)
    assert len(routes) > 50, routes
    calls, failures = 0, []
    with httpx.Client(base_url=served_module, timeout=TIMEOUT_S) as http:
        for path, method in routes:
            target = _fill(path, alices.path_values())
            for caller, key in CALLERS.items():
                headers = {"Authorization": f"Bearer {key}"} if key else {}
                variants: list[dict[str, Any]] = (
                    [{}, {"params": alices.aimed_query()}]
                    if method in ("get", "delete")
                    else [{"json": {}}, {"json": alices.aimed_body()}]
                )
                if method == "delete":
                    variants.append({"json": alices.aimed_body()})
                for extra in variants:
                    calls += 1
                    response = _call(http, method, target, headers, extra)
                    leaked = [m for m in alices.markers() if m in response.text]
                    broken = response.status_code >= 500 and response.status_code != NOT_IMPLEMENTED
                    if broken or (response.is_success and leaked):
                        failures.append(
                            f"{method.upper()} {path} ({caller}, {extra}): {leaked} "
                            f"{response.status_code} {response.text[:400]}"
                        )
    print(f"{len(routes)} routes x {len(CALLERS)} callers: {calls} calls")
    assert failures == [], "\n".join(failures)
    _alice_still_has_everything(served_module, alices)


def _call(
    http: httpx.Client, method: str, target: str, headers: dict[str, str], extra: dict[str, Any]
) -> httpx.Response:
    """One request; once more on a fresh connection if the server dropped the kept-alive one
    (after a 500 it closes it)."""
    try:
        return http.request(method.upper(), target, headers=headers, **extra)
    except httpx.TransportError:
        with httpx.Client(base_url=str(http.base_url), timeout=TIMEOUT_S) as fresh:
            return fresh.request(method.upper(), target, headers=headers, **extra)


def _alice_still_has_everything(url: str, alices: Alices) -> None:
    alice = client_for(url, ALICE_KEY)
    thread = alice.threads.get(alices.thread_id)
    assert thread["metadata"]["owner"] == "acme/alice"
    assert thread["metadata"]["note"] == SECRET
    assert SECRET in str(alice.threads.get_state(alices.thread_id)["values"])
    assert alices.run_id in [r["run_id"] for r in alice.runs.list(alices.thread_id)]
    assistant = alice.assistants.get(alices.assistant_id)
    assert assistant["context"]["system_prompt"] == SECRET
    assert assistant["metadata"]["owner"] == "acme/alice"
    assert alices.cron_id in [c["cron_id"] for c in alice.crons.search(limit=1000)]
    item = alice.store.get_item(list(alices.namespace), alices.key)
    assert item is not None
    assert item["value"]["text"] == f"Her {SECRET}"
