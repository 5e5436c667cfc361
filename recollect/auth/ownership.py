"""What an authenticated identity may touch on the served API: its own threads, runs, crons,
assistants it created, and store namespaces under its own `(org, user)`.

These are the decisions the `Auth` handlers in `graphs/auth.py` apply; they are plain
functions so the rules are tested without a server.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any

from recollect.auth.identity import Identity
from recollect.store.identity import InvalidIdError, normalise_id

OWNER_KEY = "owner"
"""The metadata key every owned resource carries, and every read is filtered by."""


def stamp_owner(value: MutableMapping[str, Any], identity: Identity) -> dict[str, str]:
    """Record the owner in a resource's metadata as it is created; the filter for reads."""
    metadata = value.get("metadata")
    if not isinstance(metadata, MutableMapping):
        metadata = {}
        value["metadata"] = metadata
    metadata[OWNER_KEY] = identity.key
    return owner_filter(identity)


def owner_filter(identity: Identity) -> dict[str, str]:
    """Only resources this identity owns."""
    return {OWNER_KEY: identity.key}


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
    """Store items live under `(org, user, ...)`; only their owner reads or writes them."""
    if not namespace or len(namespace) < 2:
        return False
    try:
        return (normalise_id(namespace[0]), normalise_id(namespace[1])) == (
            identity.org_id,
            identity.user_id,
        )
    except InvalidIdError:
        return False
