"""An authenticated identity: an organisation, a user in it, and what they may do.

The served API knows a caller only by this; graphs, checkpoints and memory take their tenant
scope from it, never from what a caller writes into a run's context. Its key, `org/user`, is
the `identity` LangGraph stamps on threads, runs and crons and filters them by.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from recollect.store.identity import InvalidIdError, normalise_id
from recollect.store.scope import ORG_ADMIN, REVIEWER, Scope

OPERATOR = "operator"
"""The permission to reach the server's own routes (`/metrics`, `/internal/*`, `/deploy`),
which act on every tenant at once; it grants nothing over anyone's data."""
KNOWN_PERMISSIONS = frozenset({REVIEWER, ORG_ADMIN, OPERATOR})


@dataclass(frozen=True, slots=True)
class Identity:
    """One caller, normalised; build it with `parse` or the constructor."""

    org_id: str
    user_id: str
    permissions: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        object.__setattr__(self, "org_id", normalise_id(self.org_id, "org id"))
        object.__setattr__(self, "user_id", normalise_id(self.user_id, "user id"))
        unknown = set(self.permissions) - KNOWN_PERMISSIONS
        if unknown:
            known = ", ".join(sorted(KNOWN_PERMISSIONS))
            raise InvalidIdError(f"unknown permission {sorted(unknown)[0]!r} (known: {known})")
        object.__setattr__(self, "permissions", frozenset(self.permissions))

    @property
    def key(self) -> str:
        """`org/user`: unique across organisations, and what ownership is stamped with."""
        return f"{self.org_id}/{self.user_id}"

    def scope(self) -> Scope:
        """The tenant scope this identity reads and writes its own memory in."""
        return _scope_of(self)

    @classmethod
    def parse(cls, text: str) -> Identity:
        """`org/user` or `org/user:perm,perm` (the form `RECOLLECT_API_KEYS` uses)."""
        who, _, perms = text.partition(":")
        org_id, slash, user_id = who.partition("/")
        if not slash:
            raise InvalidIdError(f"identity {text!r} must look like org/user[:permission,...]")
        permissions = frozenset(p.strip() for p in perms.split(",") if p.strip())
        return cls(org_id, user_id, permissions)


@lru_cache(maxsize=4096)
def _scope_of(identity: Identity) -> Scope:
    """Both are immutable and normalising is not free; the served API asks per statement."""
    return Scope.for_user(identity.org_id, identity.user_id, identity.permissions)
