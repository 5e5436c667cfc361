"""Who a request is on the served API: a Studio user is nobody unless the operator opted in,
and only an operator's key opens the server's own routes."""

from __future__ import annotations

import asyncio

import pytest

from recollect.auth.api_keys import AuthenticationError, authenticate_bearer, load_api_keys
from recollect.auth.identity import Identity
from recollect.auth.operator_routes import is_operator_route, refusal
from recollect.auth.served import identity_of


class StudioUser:
    """The shape of the server's Studio user: a `kind` and no identity of ours."""

    kind = "StudioUser"
    identity = "langgraph-studio-user"


def test_a_studio_user_is_nobody_unless_opted_in(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECOLLECT_ORG_ID", "acme")
    monkeypatch.setenv("RECOLLECT_USER_ID", "ana")
    monkeypatch.delenv("RECOLLECT_STUDIO_IDENTITY", raising=False)
    assert identity_of(StudioUser()) is None
    monkeypatch.setenv("RECOLLECT_STUDIO_IDENTITY", "off")
    assert identity_of(StudioUser()) is None
    monkeypatch.setenv("RECOLLECT_STUDIO_IDENTITY", "on")
    assert identity_of(StudioUser()) == Identity("acme", "ana")


def test_operator_routes_are_whole_segments() -> None:
    for path in ("/metrics", "/metrics/", "/internal/truncate", "/deploy", "/deploy/x/stream"):
        assert is_operator_route(path), path
    for path in ("/threads", "/metricsx", "/deployments", "/info", "/store/items", "/"):
        assert not is_operator_route(path), path


def test_only_an_operator_key_passes() -> None:
    keys = load_api_keys(
        '{"ops-key-0123456789abcdef": "ops/ops:operator", "ana-key-0123456789abcdef": "acme/ana"}'
    )

    async def identify(authorization: str | None) -> Identity | None:
        try:
            return authenticate_bearer(authorization, keys)
        except AuthenticationError as exc:
            raise AuthenticationError(str(exc)) from exc

    def refused(authorization: str | None) -> tuple[int, str] | None:
        return asyncio.run(refusal(authorization, identify))

    assert refused("Bearer ops-key-0123456789abcdef") is None
    assert refused("Bearer ana-key-0123456789abcdef") == (
        403,
        "this route is the server operator's: it needs a key with 'operator'",
    )
    assert refused(None) == (401, "missing credentials: send Authorization: Bearer <token>")
    assert refused("Bearer nobody-0123456789abcdef") == (401, "unknown API key")
