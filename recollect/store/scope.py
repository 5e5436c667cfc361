"""Whose memory a read or write touches: constructed values, never ad-hoc strings."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from recollect.store.identity import InvalidIdError, normalise_id


class ScopeKind(StrEnum):
    """How far a memory reaches."""

    USER = "user"
    """One user, across all their sessions (the default)."""
    SESSION = "session"
    """One session only ("incognito"): nothing outlives it."""
    ORG = "org"
    """Shared across an organisation, e.g. team conventions."""


ORG_OWNER = "@org"
"""The `user_id` that organisation-shared rows are stored under; no user may be called this
(an id may not start with `@`)."""

REVIEWER = "reviewer"
"""The permission to decide other people's approval workflows in one's organisation."""
ORG_ADMIN = "org_admin"
"""The permission to write and delete the organisation's shared memory (every member reads it)."""


@dataclass(frozen=True, slots=True)
class Scope:
    """A tenant boundary; build one with `for_user`, `for_session` or `for_org`."""

    org_id: str
    user_id: str
    kind: ScopeKind = ScopeKind.USER
    session_id: str | None = None
    permissions: frozenset[str] = frozenset()
    """What the identity behind this scope may do beyond its own data (`REVIEWER`)."""

    def __post_init__(self) -> None:
        """Ids are normalised here, the one door into the engine (see `identity`)."""
        if self.user_id == ORG_OWNER:
            raise InvalidIdError(f"{ORG_OWNER!r} is reserved for organisation-shared memory")
        object.__setattr__(self, "org_id", normalise_id(self.org_id, "org id"))
        object.__setattr__(self, "user_id", normalise_id(self.user_id, "user id"))
        if (self.kind is ScopeKind.SESSION) != (self.session_id is not None):
            raise ValueError("session_id is required for, and only for, a session scope")
        if self.session_id is not None:
            object.__setattr__(self, "session_id", normalise_id(self.session_id, "session id"))
        object.__setattr__(self, "permissions", frozenset(self.permissions))

    @property
    def is_reviewer(self) -> bool:
        """May decide the organisation's approval workflows (never one's own)."""
        return REVIEWER in self.permissions

    @property
    def is_org_admin(self) -> bool:
        """May write and delete the organisation's shared memory."""
        return ORG_ADMIN in self.permissions

    @property
    def owner_id(self) -> str:
        """Whose rows a write lands in: the user's, or the organisation's shared ones."""
        return ORG_OWNER if self.kind is ScopeKind.ORG else self.user_id

    @classmethod
    def for_user(
        cls, org_id: str, user_id: str, permissions: frozenset[str] = frozenset()
    ) -> Scope:
        """Memory that follows a user across sessions."""
        return cls(org_id, user_id, permissions=permissions)

    @classmethod
    def for_session(cls, org_id: str, user_id: str, session_id: str) -> Scope:
        """Memory that dies with one session."""
        return cls(org_id, user_id, ScopeKind.SESSION, session_id)

    @classmethod
    def for_org(cls, org_id: str, user_id: str, permissions: frozenset[str] = frozenset()) -> Scope:
        """Memory a user shares with their organisation: every user of the org reads it, and
        only a writer acting in this scope with `ORG_ADMIN` among `permissions` changes it."""
        return cls(org_id, user_id, ScopeKind.ORG, permissions=permissions)
