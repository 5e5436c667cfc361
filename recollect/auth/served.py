"""The identity the served API authenticated for the request or run in progress.

`langgraph dev` and LangGraph Platform authenticate every request through the `Auth` object
`langgraph.json` names, and carry the result two ways: in the run's config
(`configurable.langgraph_auth_user`) and in a context variable of the server for the request
being handled. Graph steps and the checkpointer read it here; outside the server (the CLI,
scripts, tests) there is none and the caller's own scope applies.

Studio's requests (`x-auth-scheme: langsmith`) reach the graphs as a "Studio user". In
`langgraph dev` that header alone is enough, with no token at all, so a Studio user is nobody
unless `RECOLLECT_STUDIO_IDENTITY=on` opts in (`make dev` does): then it acts as the local
identity (`RECOLLECT_ORG_ID` / `RECOLLECT_USER_ID`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from recollect.auth.identity import Identity
from recollect.langgraph_private import served_request_user

AUTH_USER_KEY = "langgraph_auth_user"
STUDIO_USER_KIND = "StudioUser"
STUDIO_IDENTITY_ENV = "RECOLLECT_STUDIO_IDENTITY"


def studio_identity() -> Identity | None:
    """Who a Studio user is: the local identity when opted in, nobody otherwise."""
    opted_in = os.environ.get(STUDIO_IDENTITY_ENV, "").strip().lower() == "on"
    return local_identity() if opted_in else None


def local_identity() -> Identity:
    """Who a developer is in Studio and on the command line when nobody says otherwise."""
    return Identity(
        os.environ.get("RECOLLECT_ORG_ID") or "default",
        os.environ.get("RECOLLECT_USER_ID") or "local-user",
    )


def served_identity(configurable: Mapping[str, Any] | None = None) -> Identity | None:
    """The authenticated caller, from the run's config or the server's request context."""
    user = (configurable or {}).get(AUTH_USER_KEY) or served_request_user()
    return identity_of(user) if user is not None else None


def identity_of(user: Any) -> Identity | None:
    """Our `Identity` for a server's user object (None for an unauthenticated one).

    Remembered per user object: the server's proxy rebuilds a dictionary of the user on every
    field read, and every checkpoint call and step of a run asks again. The memo holds the
    object itself, so its id cannot be reused while the entry lives."""
    seen = _SEEN.get(id(user))
    if seen is not None and seen[0] is user:
        return seen[1]
    found = _identity_of(user)
    if len(_SEEN) >= _SEEN_LIMIT:
        _SEEN.clear()
    _SEEN[id(user)] = (user, found)
    return found


_SEEN: dict[int, tuple[Any, Identity | None]] = {}
_SEEN_LIMIT = 4096


def _identity_of(user: Any) -> Identity | None:
    kind = _field(user, "kind") or type(user).__name__
    if kind == STUDIO_USER_KIND:
        return studio_identity()
    key = _field(user, "identity") or ""
    if not key or "/" not in key:
        return None
    return _parsed(key, frozenset(_field(user, "permissions") or ()))


@lru_cache(maxsize=4096)
def _parsed(key: str, permissions: frozenset[str]) -> Identity:
    """Parsing and normalising an identity is pure, and every checkpoint call and step of a
    run asks again (a dozen times a turn), so each caller is parsed once per process."""
    who = Identity.parse(key)
    return Identity(who.org_id, who.user_id, permissions)


def _field(user: Any, name: str) -> Any:
    """Server user objects are attribute- or mapping-like, depending on where they travelled."""
    if isinstance(user, Mapping):
        return user.get(name)
    value = getattr(user, name, None)
    if value is None and hasattr(user, "get"):
        try:
            value = user.get(name)
        except (TypeError, KeyError):
            value = None
    return value
