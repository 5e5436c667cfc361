"""Whose memory a read or write touches: constructed values, never ad-hoc strings."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class ScopeKind(StrEnum):
    """How far a memory reaches."""

    USER = "user"
    """One user, across all their sessions (the default)."""
    SESSION = "session"
    """One session only ("incognito"): nothing outlives it."""
    ORG = "org"
    """Shared across an organisation, e.g. team conventions."""


ORG_OWNER = "@org"
"""The `user_id` that organisation-shared rows are stored under; no user may be called this."""


@dataclass(frozen=True, slots=True)
class Scope:
    """A tenant boundary; build one with `for_user`, `for_session` or `for_org`."""

    org_id: str
    user_id: str
    kind: ScopeKind = ScopeKind.USER
    session_id: str | None = None

    def __post_init__(self) -> None:
        if not self.org_id or not self.user_id:
            raise ValueError("a scope needs a non-empty org_id and user_id")
        if self.user_id == ORG_OWNER:
            raise ValueError(f"{ORG_OWNER!r} is reserved for organisation-shared memory")
        if (self.kind is ScopeKind.SESSION) != (self.session_id is not None):
            raise ValueError("session_id is required for, and only for, a session scope")

    @property
    def owner_id(self) -> str:
        """Whose rows a write lands in: the user's, or the organisation's shared ones."""
        return ORG_OWNER if self.kind is ScopeKind.ORG else self.user_id

    @classmethod
    def for_user(cls, org_id: str, user_id: str) -> Scope:
        """Memory that follows a user across sessions."""
        return cls(org_id, user_id)

    @classmethod
    def for_session(cls, org_id: str, user_id: str, session_id: str) -> Scope:
        """Memory that dies with one session."""
        return cls(org_id, user_id, ScopeKind.SESSION, session_id)

    @classmethod
    def for_org(cls, org_id: str, user_id: str) -> Scope:
        """Memory a user shares with their organisation: every user of the org reads it, and
        only a writer acting in this scope changes it."""
        return cls(org_id, user_id, ScopeKind.ORG)
