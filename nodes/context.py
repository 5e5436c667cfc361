"""The run's `Context`, whether the caller passed one, a dict, or nothing; with the identity
the served API authenticated, when there is one."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Protocol

from langgraph.config import get_config
from langgraph.runtime import Runtime

from recollect.auth.served import served_identity
from recollect.store.errors import RecollectError
from recollect.store.identity import InvalidIdError, normalise_id
from state.context import Context


class IdentityMismatchError(RecollectError):
    """A run's context names another user or organisation than the authenticated caller."""


class HasContext(Protocol):
    """A graph step's or a tool's runtime: both carry the run's context."""

    @property
    def context(self) -> Context | dict[str, Any] | None: ...


def context_of(runtime: Runtime[Context] | HasContext) -> Context:
    """Environment defaults fill in when a caller (e.g. Studio) sends no context; on the
    served API, user, org and permissions are the authenticated caller's."""
    raw = runtime.context
    if raw is None:
        ctx = Context()
    elif isinstance(raw, dict):
        ctx = Context(**raw)
    else:
        ctx = raw
    identity = served_identity(_configurable())
    if identity is None:
        return ctx
    named = raw if isinstance(raw, dict) else {}
    for field, own in (("user_id", identity.user_id), ("org_id", identity.org_id)):
        if field in named and not _same(named[field], own):
            raise IdentityMismatchError(
                f"the run's context names {field} {str(named[field])[:60]!r}, but the caller "
                f"is authenticated as {identity.key!r}"
            )
    return replace(
        ctx,
        user_id=identity.user_id,
        org_id=identity.org_id,
        permissions=tuple(sorted(identity.permissions)),
    )


def _configurable() -> dict[str, Any]:
    try:
        return dict(get_config().get("configurable") or {})
    except RuntimeError:  # called outside a run (a unit test of a node)
        return {}


def _same(named: Any, own: str) -> bool:
    try:
        return isinstance(named, str) and normalise_id(named) == own
    except InvalidIdError:
        return False
