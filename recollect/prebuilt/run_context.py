"""The run's `Context`, whether the caller passed one, a dict, or nothing; with the identity
the served API authenticated, when there is one.

A graph whose settings are a `Context` subclass (a fork's, with fields of its own) hands its
steps that class: `recollect.with_settings` makes the run's context one (`settled`)
before a step reads it, and `context_of` keeps the class it is given. The drop-in hosts
(`MemoryMiddleware`, `MemoryHooks`) settle the runtime their hooks receive the same way."""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any, Protocol, TypeVar

from langgraph.config import get_config
from langgraph.runtime import Runtime

from recollect.auth.served import served_identity
from recollect.state.context import Context
from recollect.store.errors import RecollectError
from recollect.store.identity import InvalidIdError, normalise_id

SettingsT = TypeVar("SettingsT", bound=Context)


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
    ctx = as_schema(raw, Context)
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


def settled(runtime: Runtime[Any], schema: type[Context]) -> Runtime[Any]:
    """`runtime`, its context made a `schema` (the same runtime when it is one already)."""
    if isinstance(runtime.context, schema):
        return runtime
    return runtime.override(context=as_schema(runtime.context, schema))


def as_schema(raw: Context | dict[str, Any] | None, schema: type[SettingsT]) -> SettingsT:
    """The run's settings as `schema`: a dict or nothing fills the rest with its defaults; an
    instance of another `Context` class keeps the values the two share (a caller may send the
    template's `Context` to a fork's graph, whose own fields then take their defaults)."""
    if isinstance(raw, schema):
        return raw
    if raw is None:
        return schema()
    if isinstance(raw, dict):
        return schema(**raw)
    own = {f.name for f in fields(schema) if f.init}
    return schema(**{f.name: getattr(raw, f.name) for f in fields(raw) if f.name in own})


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
