"""Scopes are validated values."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from recollect.store.identity import InvalidIdError, normalise_order_id
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
    with pytest.raises(ValueError, match=r"empty|session_id"):
        build()


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("ALICE-ZQ", "alice-zq"),
        ("gina\u200b", "gina"),
        ("\u200egina\u2063", "gina"),
        ("\uff27\uff29\uff2e\uff21", "gina"),
        ("ann\u2010marie", "ann-marie"),
        ("  bob  ", "bob"),
        ("Straße  GmbH", "strasse gmbh"),
        ("\u7528\u6237 42", "\u7528\u6237 42"),
    ],
)
def test_ids_are_stored_in_one_form(given: str, stored: str) -> None:
    assert Scope.for_user("Acme", given) == Scope.for_user("acme", stored)


@pytest.mark.parametrize(
    ("user_id", "says"),
    [
        ("g\u0456na", "mixes the cyrillic and latin scripts"),  # Cyrillic i
        ("\u0440aypal", "mixes the cyrillic and latin scripts"),  # Cyrillic r
        ("ali\u03bfe", "mixes the greek and latin scripts"),  # Greek omicron
        ("@org", "reserved"),
        ("@ORG", "may contain only"),
        ("", "empty"),
        ("\u200b", "empty"),
        ("x" * 129, "the limit is 128"),
        ("x" * 10_000, "the limit is 128"),
        ("a/b", "may contain only"),
        ("../etc", "may contain only"),
    ],
)
def test_ids_that_are_not_ids_get_one_clear_line(user_id: str, says: str) -> None:
    with pytest.raises(InvalidIdError, match=says) as caught:
        Scope.for_user("acme", user_id)
    assert "\n" not in str(caught.value)
    assert len(str(caught.value)) < 200


def test_order_ids_are_stored_in_one_form() -> None:
    fullwidth = "\uff2f\uff32\uff24\uff0d\uff17\uff17"
    variants = ["ORD-77", "ord-77", "ORD-77\u200b", "ORD\u201077", fullwidth, " ord\u221277 "]
    assert {normalise_order_id(v) for v in variants} == {"ORD-77"}
    with pytest.raises(InvalidIdError, match="may contain only"):
        normalise_order_id("ORD 77; DROP")
