"""Who may call the served API, and what each caller may touch (`langgraph.json` → `auth`).

`authenticate` turns a bearer token into an identity (`RECOLLECT_API_KEYS`); swap its body
for a JWT or OIDC check in production and keep the rest. Every resource is stamped with its
owner when it is created and every read, search and run is filtered by it, so another user's
thread id answers 404. A run whose context or config names another user or organisation is
refused: graphs take identity from here, never from the caller. The graphs' own assistants
are everyone's; an assistant a user creates is that user's alone. Studio acts as the configured
local identity only when `RECOLLECT_STUDIO_IDENTITY=on` (`recollect/auth/served.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from langgraph_sdk import Auth

from recollect.auth.api_keys import AuthenticationError, authenticate_bearer, load_api_keys
from recollect.auth.context_bounds import context_refusal
from recollect.auth.identity import Identity
from recollect.auth.ownership import (
    beyond_a_decision,
    foreign_identity_in_run,
    is_approval_assistant,
    may_write_namespace,
    metadata_claim,
    namespace_allowed,
    own_store_prefix,
    owned_or_system,
    owner_filter,
    stamp_owner,
    thread_filter,
)
from recollect.auth.served import identity_of
from recollect.engine import MessageRefusedError, MessageTooLargeError, check_message

auth = Auth()
_KEYS = load_api_keys()
"""Read once, at start-up: a bad value stops the server instead of failing every request."""


@auth.authenticate
async def authenticate(authorization: str | None) -> Auth.types.MinimalUserDict:
    """`Authorization: Bearer <token>` → the identity `RECOLLECT_API_KEYS` maps it to."""
    try:
        identity = authenticate_bearer(authorization, _KEYS)
    except AuthenticationError as exc:
        raise Auth.exceptions.HTTPException(status_code=401, detail=str(exc)) from exc
    return {
        "identity": identity.key,
        "display_name": identity.user_id,
        "is_authenticated": True,
        "permissions": sorted(identity.permissions),
    }


def _caller(ctx: Auth.types.AuthContext) -> Identity:
    identity = identity_of(ctx.user)
    if identity is None:
        raise Auth.exceptions.HTTPException(status_code=401, detail="not authenticated")
    return identity


@auth.on
async def owned_only(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> dict[str, str]:
    """The default for every resource and action: stamp the owner on create, filter by it."""
    identity = _caller(ctx)
    if ctx.action == "create":
        return stamp_owner(value, identity)
    return owner_filter(identity)


@auth.on.threads
async def owned_threads(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> dict[str, str]:
    """One's own threads. A reviewer's key reads the organisation's approval workflows and
    nothing more: no new threads, and updates (state, metadata) and deletes reach only one's
    own threads (a reviewer has none), so another's answers 404."""
    identity = _caller(ctx)
    if ctx.action == "create":
        if identity.scope().is_reviewer:
            raise Auth.exceptions.HTTPException(
                status_code=403, detail="a reviewer's key reads and decides workflows only"
            )
        _refuse_claims(value.get("metadata"), identity)
        stamp_owner(value, identity)
    if ctx.action == "update":  # `owner` and `org` stay what creation stamped
        _refuse_claims(value.get("metadata"), identity)
    if ctx.action in ("update", "delete"):
        return owner_filter(identity)
    return thread_filter(identity)


@auth.on.threads.create_run
async def runs_as_the_caller(
    ctx: Auth.types.AuthContext, value: Auth.types.RunsCreate
) -> dict[str, str]:
    """A run on one's own thread, as oneself: naming another user in its context is refused."""
    identity = _caller(ctx)
    _refuse_run(value.get("kwargs") or {}, identity)
    if identity.scope().is_reviewer and not is_approval_assistant(value.get("assistant_id")):
        raise Auth.exceptions.HTTPException(
            status_code=403, detail="a reviewer's key runs the approval graph only"
        )
    if identity.scope().is_reviewer:
        beyond = beyond_a_decision(value.get("kwargs") or {})
        if beyond:
            raise Auth.exceptions.HTTPException(status_code=403, detail=beyond)
    stamp_owner(cast(dict[str, Any], value), identity)
    return thread_filter(identity)


@auth.on.crons.create
async def crons_as_the_caller(
    ctx: Auth.types.AuthContext, value: Auth.types.CronsCreate
) -> dict[str, str]:
    """A cron is checked when it is created as the runs it will start are: its message size
    and identity, and a reviewer's key schedules nothing. Each run it starts is created as
    its creator (the server records who), so `runs_as_the_caller` checks it again."""
    identity = _caller(ctx)
    if identity.scope().is_reviewer:
        raise Auth.exceptions.HTTPException(
            status_code=403, detail="a reviewer's key reads and decides workflows only"
        )
    payload = value.get("payload") or {}
    if not isinstance(value.get("schedule"), str) or not payload.get("assistant_id"):
        raise Auth.exceptions.HTTPException(
            status_code=422, detail="a cron needs a schedule (cron syntax) and an assistant_id"
        )
    _refuse_run(payload, identity)
    _refuse_claims(cast(dict[str, Any], value).get("metadata"), identity)
    return stamp_owner(cast(dict[str, Any], value), identity)


@auth.on.crons.update
async def update_own_crons(
    ctx: Auth.types.AuthContext, value: Auth.types.CronsUpdate
) -> dict[str, str]:
    """A cron's new payload is checked like a new one's; only one's own crons change."""
    identity = _caller(ctx)
    _refuse_run(value.get("payload") or {}, identity)
    _refuse_claims(cast(dict[str, Any], value).get("metadata"), identity)
    return owner_filter(identity)


@auth.on.assistants.read
async def shared_assistants(
    ctx: Auth.types.AuthContext, value: Auth.types.AssistantsRead
) -> dict[str, Any]:
    """The graphs' assistants are the deployment's, readable by every caller; one a user
    created is that user's alone (reading, its versions, running it, a cron on it)."""
    return owned_or_system(_caller(ctx))


@auth.on.assistants.search
async def search_shared_assistants(
    ctx: Auth.types.AuthContext, value: Auth.types.AssistantsSearch
) -> dict[str, Any]:
    """Listing and counting assistants shows the graphs' and one's own."""
    return owned_or_system(_caller(ctx))


def _check_assistant(value: Mapping[str, Any], identity: Identity) -> None:
    """What an assistant may not carry: a claim to be another's or the server's, another
    user in its context, or settings out of bounds."""
    _refuse_claims(value.get("metadata"), identity)
    named = foreign_identity_in_run(
        {"context": value.get("context"), "config": value.get("config")}, identity
    )
    if named:
        raise Auth.exceptions.HTTPException(status_code=403, detail=named)
    _refuse_out_of_bounds(value.get("context"), (value.get("config") or {}).get("configurable"))


@auth.on.assistants.create
async def own_assistant(
    ctx: Auth.types.AuthContext, value: Auth.types.AssistantsCreate
) -> dict[str, str]:
    """A new assistant is its creator's; it may not pass as the server's or name another user."""
    identity = _caller(ctx)
    _check_assistant(cast(Mapping[str, Any], value), identity)
    return stamp_owner(cast(dict[str, Any], value), identity)


@auth.on.assistants.update
async def update_own_assistant(
    ctx: Auth.types.AuthContext, value: Auth.types.AssistantsUpdate
) -> dict[str, str]:
    """Only one's own assistants change, and never hands to another owner or the server."""
    identity = _caller(ctx)
    _check_assistant(cast(Mapping[str, Any], value), identity)
    return owner_filter(identity)


def _refuse_run(kwargs: dict[str, Any], identity: Identity) -> None:
    """What every run (and cron) must pass before anything is stored or started: it names no
    other user or organisation, and its messages are within the size limits."""
    reason = foreign_identity_in_run(kwargs, identity)
    if reason:
        raise Auth.exceptions.HTTPException(status_code=403, detail=reason)
    _refuse_out_of_bounds(kwargs.get("context"), (kwargs.get("config") or {}).get("configurable"))
    refused = refused_input(kwargs)
    if refused is not None:  # refused before the input is checkpointed, embedded or sent anywhere
        status = 413 if isinstance(refused, MessageTooLargeError) else 422
        raise Auth.exceptions.HTTPException(status_code=status, detail=str(refused))


def _refuse_out_of_bounds(*contexts: object) -> None:
    """A model off the allow-list, or a budget or worker count over its cap, is refused."""
    for context in contexts:
        reason = context_refusal(context)
        if reason:
            raise Auth.exceptions.HTTPException(status_code=422, detail=reason)


def _refuse_claims(metadata: object, identity: Identity) -> None:
    claim = metadata_claim(metadata, identity)
    if claim:
        raise Auth.exceptions.HTTPException(status_code=403, detail=claim)


@auth.on.store()
async def own_namespaces(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> None:
    """Store items live under `(org, user, ...)` or the organisation's `(org, "@org", ...)`;
    a search or listing that names nobody is narrowed to the caller; the rest is refused.
    Every member reads the organisation's items; only a key with `org_admin` writes or
    deletes them."""
    identity = _caller(ctx)
    if ctx.action in ("search", "list_namespaces"):
        value["namespace"] = own_store_prefix(value.get("namespace"), identity)
    if not namespace_allowed(value.get("namespace"), identity):
        raise Auth.exceptions.HTTPException(
            status_code=403,
            detail=f"store namespaces must start with ({identity.org_id!r}, {identity.user_id!r})"
            f" or ({identity.org_id!r}, '@org')",
        )
    if ctx.action in ("put", "delete") and not may_write_namespace(value["namespace"], identity):
        raise Auth.exceptions.HTTPException(
            status_code=403,
            detail=f"writing ({identity.org_id!r}, '@org', ...) needs a key with 'org_admin'",
        )


def refused_input(kwargs: dict[str, Any]) -> MessageRefusedError | None:
    """Why a run's input must be refused before it is stored, if a message in it is over the
    size limits or holds text the database cannot store (the same check the chat and the
    graph's entry make)."""
    run_input = kwargs.get("input")
    messages = run_input.get("messages") if isinstance(run_input, dict) else None
    for message in messages if isinstance(messages, list) else []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str | list):
            try:
                check_message(content)
            except MessageRefusedError as exc:
                return exc
    return None
