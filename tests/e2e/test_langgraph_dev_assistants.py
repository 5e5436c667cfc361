"""`langgraph dev` assistants: the graphs' own are everyone's, a custom one its creator's.

Alice makes an assistant whose system prompt holds a secret. Bob, in her organisation, and
Gina, in another, try every assistants route on it, list and count assistants, run it and put
a cron on it; none of it answers with anything of hers. Nobody may pass an assistant off as the
server's, hand it to someone else, or bake another user into its context.
"""

from __future__ import annotations

import pytest

from tests.support.langgraph_dev import ALICE_KEY, BOB_KEY, GINA_KEY, client_for, status_of

SECRET = "vault phrase tangerine-42"
HELLO = {"messages": [{"role": "human", "content": "hi"}]}


@pytest.fixture(scope="module")
def alices_assistant(served_module: str) -> str:
    alice = client_for(served_module, ALICE_KEY)
    created = alice.assistants.create(
        "agent", context={"system_prompt": f"Never reveal {SECRET}"}, name="alice-private"
    )
    assert created["metadata"]["owner"] == "acme/alice"
    return str(created["assistant_id"])


@pytest.mark.parametrize("key", [BOB_KEY, GINA_KEY], ids=["same-org", "other-org"])
def test_a_custom_assistant_is_its_creators_alone(
    served_module: str, alices_assistant: str, key: str
) -> None:
    other = client_for(served_module, key)
    aid = alices_assistant
    for call in (
        lambda: other.assistants.get(aid),
        lambda: other.assistants.get_versions(aid),
        lambda: other.assistants.get_graph(aid),
        lambda: other.assistants.get_schemas(aid),
        lambda: other.assistants.get_subgraphs(aid),
        lambda: other.assistants.update(aid, metadata={"x": "y"}),
        lambda: other.assistants.set_latest(aid, 1),
        lambda: other.assistants.delete(aid),
    ):
        assert status_of(call) == 404
    listed = other.assistants.search(limit=100)
    assert aid not in [a["assistant_id"] for a in listed]
    assert SECRET not in str(listed)
    assert other.assistants.count() == len(listed)
    thread = other.threads.create()["thread_id"]
    assert status_of(lambda: other.runs.wait(thread, aid, input=HELLO)) == 404
    assert status_of(lambda: other.runs.create(None, aid, input=HELLO)) == 404
    assert status_of(lambda: other.crons.create(aid, schedule="0 0 1 1 *", input=HELLO)) == 404
    assert other.runs.list(thread) == []


def test_the_graphs_assistants_are_everyones(served_module: str, alices_assistant: str) -> None:
    for key in (ALICE_KEY, BOB_KEY, GINA_KEY):
        client = client_for(served_module, key)
        system = client.assistants.search(metadata={"created_by": "system"}, limit=100)
        assert {a["graph_id"] for a in system} >= {"agent", "approval", "memory", "orchestrator"}
        assert (
            client.assistants.get(system[0]["assistant_id"])["metadata"]["created_by"] == "system"
        )
    alice = client_for(served_module, ALICE_KEY)
    assert alice.assistants.get(alices_assistant)["context"]["system_prompt"].endswith(SECRET)
    assert alices_assistant in [a["assistant_id"] for a in alice.assistants.search(limit=100)]


def test_nobody_claims_the_servers_mark_or_another_owner(
    served_module: str, alices_assistant: str
) -> None:
    alice = client_for(served_module, ALICE_KEY)
    for metadata in ({"created_by": "system"}, {"owner": "acme/bob"}, {"org": "globex"}):
        assert status_of(lambda m=metadata: alice.assistants.create("agent", metadata=m)) == 403
        status = status_of(lambda m=metadata: alice.assistants.update(alices_assistant, metadata=m))
        assert status == 403
    for context in ({"user_id": "bob"}, {"org_id": "globex"}):
        assert status_of(lambda c=context: alice.assistants.create("agent", context=c)) == 403
    system = alice.assistants.search(metadata={"created_by": "system"}, limit=1)[0]
    assert status_of(lambda: alice.assistants.update(system["assistant_id"], name="x")) == 404
    assert status_of(lambda: alice.assistants.delete(system["assistant_id"])) == 404
    same = alice.assistants.update(alices_assistant, metadata={"owner": "acme/alice", "n": "1"})
    assert same["metadata"]["owner"] == "acme/alice"
