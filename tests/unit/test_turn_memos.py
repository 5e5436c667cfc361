"""What a served turn works out once instead of at every call: the bound model and the caller."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.tools import tool

from recollect.auth.served import identity_of
from recollect.models.offline import OfflineChatModel
from recollect.prebuilt.call_model import _Bound


@tool
def look_up_order(order_id: str) -> str:
    """Find an order by its number."""
    return order_id


def test_tools_are_bound_once_per_model(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = OfflineChatModel.bind_tools

    def counting(self: OfflineChatModel, tools: Any, **kwargs: Any) -> Any:
        calls.append(len(tools))
        return real(self, tools, **kwargs)

    monkeypatch.setattr(OfflineChatModel, "bind_tools", counting)
    bound = _Bound([look_up_order])
    first, second = OfflineChatModel(), OfflineChatModel()
    assert bound(first) is bound(first)
    assert calls == [1]
    assert bound(second) is not bound(first)  # another model is bound anew, never reused
    assert calls == [1, 1, 1]
    assert _Bound([])(first) is first


class CountingUser:
    """A server user object that counts how often its fields are read."""

    def __init__(self, identity: str) -> None:
        self._identity = identity
        self.reads = 0

    @property
    def identity(self) -> str:
        self.reads += 1
        return self._identity

    @property
    def permissions(self) -> list[str]:
        self.reads += 1
        return []


def test_a_caller_is_read_once_per_user_object() -> None:
    ana = CountingUser("acme/ana")
    first = identity_of(ana)
    reads = ana.reads
    assert identity_of(ana) == first
    assert ana.reads == reads
    assert first is not None
    assert (first.org_id, first.user_id) == ("acme", "ana")
    bo = CountingUser("acme/bo")  # a new object is read afresh, whatever ids it reuses
    found = identity_of(bo)
    assert found is not None
    assert found.user_id == "bo"
    assert identity_of(CountingUser("no-slash")) is None
