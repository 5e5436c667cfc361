"""What an authenticated identity may touch on the served API: its own threads, runs, crons,
assistants it created, and store namespaces under its own `(org, user)`.

A reviewer's key is a review console: its threads are the organisation's approval workflows
(threads that ran the `approval` graph), which it may read and resume with a decision, and
nothing else: no new threads, no state or metadata updates, no deletes, no new input.
The server's filters cannot say "mine or my organisation's workflows", so a reviewer who also
talks to the agent does so with a second key.

These are the decisions the `Auth` handlers in `graphs/auth.py` apply; they are plain
functions so the rules are tested without a server.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any

from recollect.auth.identity import Identity
from recollect.store.identity import InvalidIdError, normalise_id
from recollect.store.scope import ORG_ADMIN, ORG_OWNER

OWNER_KEY = "owner"
"""The metadata key every owned resource carries, and every read is filtered by."""
ORG_KEY = "org"
"""The owner's organisation, stamped beside the owner (what a reviewer's filter reads)."""
GRAPH_KEY = "graph_id"
"""Set on a thread by the server when a graph runs on it."""
APPROVAL_GRAPH = "approval"
CREATED_BY_KEY = "created_by"
SYSTEM = "system"
"""The server marks the assistants it creates for the graphs `created_by: system`; those are
the deployment's, readable by every caller, and no caller may claim the mark."""
_GRAPH_NAMESPACE = uuid.UUID("6ba7b821-9dad-11d1-80b4-00c04fd430c8")
"""The namespace the LangGraph server derives a graph's default assistant id from."""


def stamp_owner(value: MutableMapping[str, Any], identity: Identity) -> dict[str, str]:
    """Record the owner in a resource's metadata as it is created; the filter for reads."""
    metadata = value.get("metadata")
    if not isinstance(metadata, MutableMapping):
        metadata = {}
        value["metadata"] = metadata
    metadata[OWNER_KEY] = identity.key
    metadata[ORG_KEY] = identity.org_id
    return owner_filter(identity)


def owner_filter(identity: Identity) -> dict[str, str]:
    """Only resources this identity owns."""
    return {OWNER_KEY: identity.key}


def owned_or_system(identity: Identity) -> dict[str, Any]:
    """The assistants an identity sees: the graphs' own and the ones it created itself."""
    return {"$or": [owner_filter(identity), {CREATED_BY_KEY: SYSTEM}]}


def metadata_claim(metadata: object, identity: Identity) -> str | None:
    """Why metadata a caller writes must be refused, if it names another owner or organisation
    or claims to be the server's; repeating one's own stamp (as Studio does) is fine."""
    if not isinstance(metadata, Mapping):
        return None
    for key, own in ((OWNER_KEY, identity.key), (ORG_KEY, identity.org_id)):
        if key in metadata and metadata[key] != own:
            return f"metadata {key!r} is set by the server from your key and cannot be changed"
    if metadata.get(CREATED_BY_KEY) == SYSTEM:
        return f"metadata {CREATED_BY_KEY!r}: {SYSTEM!r} marks the server's own assistants"
    return None


def thread_filter(identity: Identity) -> dict[str, str]:
    """The threads an identity sees: its own, or (a reviewer) its organisation's workflows."""
    if identity.scope().is_reviewer:
        return {ORG_KEY: identity.org_id, GRAPH_KEY: APPROVAL_GRAPH}
    return owner_filter(identity)


def beyond_a_decision(kwargs: Mapping[str, Any]) -> str | None:
    """Why a reviewer's run must be refused, if it does more than resume a waiting workflow
    from its latest checkpoint with a decision (no new input, no state update, no jump, no
    replay from an older checkpoint)."""
    command = kwargs.get("command")
    sent = (
        {k for k, v in command.items() if v is not None} if isinstance(command, Mapping) else set()
    )
    if kwargs.get("input") or sent != {"resume"}:
        return (
            "a reviewer's key only decides a waiting workflow: send command={'resume': <decision>}"
            " and nothing else"
        )
    configurable = (kwargs.get("config") or {}).get("configurable") or {}
    if isinstance(configurable, Mapping) and configurable.get("checkpoint_id"):
        return "a reviewer's key decides from the workflow's latest checkpoint only"
    return None


def is_approval_assistant(assistant_id: object) -> bool:
    """Whether a run names the approval graph, by name or by its default assistant's id."""
    text = str(assistant_id)
    return text in (APPROVAL_GRAPH, str(uuid.uuid5(_GRAPH_NAMESPACE, APPROVAL_GRAPH)))


def foreign_identity_in_run(kwargs: Mapping[str, Any], identity: Identity) -> str | None:
    """Why a run must be refused, if its context or config names another user or org."""
    configurable = (kwargs.get("config") or {}).get("configurable") or {}
    for source_name, source in (("context", kwargs.get("context") or {}), ("config", configurable)):
        if not isinstance(source, Mapping):
            continue
        for field, own in (("user_id", identity.user_id), ("org_id", identity.org_id)):
            named = source.get(field)
            if named is None:
                continue
            try:
                same = isinstance(named, str) and normalise_id(named) == own
            except InvalidIdError:
                same = False
            if not same:
                return (
                    f"the run's {source_name} names {field} {str(named)[:60]!r}, but you are "
                    f"authenticated as {identity.key!r}; leave it out or name yourself"
                )
    return None


def namespace_allowed(namespace: Sequence[str] | None, identity: Identity) -> bool:
    """Store items live under `(org, user, ...)`, only their owner reads or writes them, and
    the organisation's shared facts under `(org, "@org", ...)`, which its members share."""
    if not namespace or len(namespace) < 2:
        return False
    try:
        org_id = normalise_id(namespace[0])
        owner = namespace[1] if namespace[1] == ORG_OWNER else normalise_id(namespace[1])
    except InvalidIdError:
        return False
    return org_id == identity.org_id and owner in (identity.user_id, ORG_OWNER)


def may_write_namespace(namespace: Sequence[str], identity: Identity) -> bool:
    """Whether an identity may write or delete in an allowed namespace: its own always, the
    organisation's shared one only with `org_admin`."""
    return namespace[1] != ORG_OWNER or ORG_ADMIN in identity.permissions


def own_store_prefix(namespace: Sequence[str] | None, identity: Identity) -> tuple[str, ...]:
    """A search or listing that names no user (or only the caller's organisation) is narrowed
    to the caller's own `(org, user)`, whatever store serves it."""
    parts = tuple(namespace or ())
    if not parts or (len(parts) == 1 and parts[0] == identity.org_id):
        return (identity.org_id, identity.user_id)
    return parts
