"""The request-level refusals in front of the served API, as pure functions: two different
credentials, a thread id the caller picked, a shared-memory write without `org_admin`."""

from __future__ import annotations

import json

import pytest

from recollect.auth.identity import Identity
from recollect.auth.one_credential import ambiguous_credential
from recollect.auth.ownership import may_write_namespace
from recollect.auth.thread_ids import (
    CALLER_THREAD_IDS_ENV,
    caller_chosen_thread,
    caller_ids_allowed,
)


def test_two_different_credentials_are_ambiguous_and_a_repeat_is_not() -> None:
    a, b = b"Bearer alice-key-0123456789", b"Bearer bob-key-0123456789"
    assert ambiguous_credential([(b"authorization", a), (b"Authorization", b)]) == "authorization"
    assert ambiguous_credential([(b"x-api-key", b"one"), (b"X-API-Key", b"two")]) == "x-api-key"
    assert ambiguous_credential([(b"authorization", a), (b"authorization", a + b" ")]) is None
    assert ambiguous_credential([(b"authorization", a), (b"x-api-key", b"one")]) is None
    assert ambiguous_credential([]) is None


@pytest.mark.parametrize(
    ("path", "body", "chosen"),
    [
        ("/threads", {"thread_id": "0193a7c2-0000-7000-8000-000000000001"}, True),
        ("/threads/", {"thread_id": "x", "if_exists": "do_nothing"}, True),
        ("/threads", {}, False),
        ("/threads", {"thread_id": None, "metadata": {"a": 1}}, False),
        ("/threads/t-1/runs", {"assistant_id": "agent", "if_not_exists": "create"}, True),
        ("/threads/t-1/runs/wait", {"if_not_exists": "create"}, True),
        ("/threads/t-1/runs/stream", {"if_not_exists": "create"}, True),
        ("/threads/t-1/runs", {"if_not_exists": "reject"}, False),
        ("/threads/t-1/runs/crons", {"if_not_exists": "create"}, False),
        ("/threads/search", {"thread_id": "x"}, False),
    ],
)
def test_a_create_that_names_its_thread_id(path: str, body: object, chosen: bool) -> None:
    assert caller_chosen_thread(path, json.dumps(body).encode()) is chosen


def test_a_body_that_is_not_a_json_object_is_left_to_the_server() -> None:
    assert caller_chosen_thread("/threads", b"not json") is False
    assert caller_chosen_thread("/threads", b"[1, 2]") is False


def test_only_an_org_admin_writes_the_shared_namespace() -> None:
    member, admin = Identity("acme", "bob"), Identity("acme", "olga", frozenset({"org_admin"}))
    assert may_write_namespace(("acme", "bob", "facts"), member)
    assert not may_write_namespace(("acme", "@org", "facts"), member)
    assert may_write_namespace(("acme", "@org", "facts"), admin)


@pytest.mark.parametrize(
    ("value", "allowed"), [("on", True), (" ON ", True), ("", False), ("1", False)]
)
def test_caller_thread_ids_are_an_explicit_opt_in(
    monkeypatch: pytest.MonkeyPatch, value: str, allowed: bool
) -> None:
    monkeypatch.setenv(CALLER_THREAD_IDS_ENV, value)
    assert caller_ids_allowed() is allowed
