"""Scopes are validated values."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from recollect.store.scope import Scope, ScopeKind


def test_constructors_set_the_kind() -> None:
    assert Scope.for_user("o", "u").kind is ScopeKind.USER
    assert Scope.for_org("o", "u").kind is ScopeKind.ORG
    session = Scope.for_session("o", "u", "s1")
    assert session.kind is ScopeKind.SESSION
    assert session.session_id == "s1"


@pytest.mark.parametrize(
    "build",
    [
        lambda: Scope("", "u"),
        lambda: Scope("o", ""),
        lambda: Scope("o", "u", ScopeKind.SESSION),
        lambda: Scope("o", "u", ScopeKind.USER, "s1"),
    ],
)
def test_invalid_scopes_are_rejected(build: Callable[[], Scope]) -> None:
    with pytest.raises(ValueError, match=r"scope|session_id"):
        build()
