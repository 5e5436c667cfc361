"""How a `BaseStore` namespace names a Recollect scope.

    (org, user, "facts", *labels)    the user's facts; labels group items as the caller likes
    (org, "@org", "facts", *labels)  the organisation's shared facts
    (org, user, "profile")           the user's profile, one item per field

The first two elements are the tenant; they must be the caller's own when a served request
says who the caller is (`graphs/auth.py` refuses the rest before the store is reached).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from recollect.store.identity import InvalidIdError, normalise_id
from recollect.store.schema.store_items import MAX_KEY_LENGTH, MAX_LABELS
from recollect.store.scope import ORG_OWNER, Scope

MAX_LABEL_LENGTH = 128
SHARED = ORG_OWNER
"""The second element of an organisation-shared namespace."""


class Kind(StrEnum):
    """What the third element of a namespace addresses."""

    FACTS = "facts"
    PROFILE = "profile"


class NamespaceError(ValueError):
    """A namespace or key outside the documented convention; nothing was read or written."""


@dataclass(frozen=True, slots=True)
class Target:
    """One parsed namespace: whose memory, which part of it, and the caller's labels."""

    org_id: str
    owner: str
    """A user id, or `SHARED` for the organisation's facts."""
    kind: Kind
    labels: tuple[str, ...] = ()

    @property
    def shared(self) -> bool:
        return self.owner == SHARED

    def namespace(self) -> tuple[str, ...]:
        return (self.org_id, self.owner, self.kind.value, *self.labels)

    def scope(self, writer: str | None, permissions: frozenset[str] = frozenset()) -> Scope:
        """The scope statements run in; an organisation write needs the writer's user id (and
        `org_admin` among `permissions` for the write to be allowed)."""
        if not self.shared:
            return Scope.for_user(self.org_id, self.owner)
        if writer is None:
            raise NamespaceError(
                f"the organisation namespace ({self.org_id!r}, {SHARED!r}, ...) needs the "
                "caller's identity: serve the store behind auth, or build it with identity="
            )
        return Scope.for_org(self.org_id, writer, permissions)


def tenant(org: str, owner: str) -> tuple[str, str]:
    """Normalised `(org, owner)`; a bad id is a one-line `NamespaceError`."""
    try:
        org_id = normalise_id(org, "org id")
        owner_id = SHARED if owner == SHARED else normalise_id(owner, "user id")
    except InvalidIdError as exc:
        raise NamespaceError(f"namespace {(org, owner)!r}: {exc}") from exc
    return org_id, owner_id


def parse(namespace: Sequence[str]) -> Target:
    """The target of a namespace an item lives in (get, put, delete)."""
    parts = tuple(namespace)
    if len(parts) < 3 or not all(isinstance(p, str) for p in parts):
        raise NamespaceError(
            f"namespace {parts!r} must be (org, user, 'facts', ...), (org, '{SHARED}', "
            "'facts', ...) or (org, user, 'profile')"
        )
    org_id, owner = tenant(parts[0], parts[1])
    try:
        kind = Kind(parts[2])
    except ValueError:
        raise NamespaceError(
            f"namespace {parts!r}: the third element must be 'facts' or 'profile'"
        ) from None
    labels = parts[3:]
    if kind is Kind.PROFILE and (labels or owner == SHARED):
        raise NamespaceError(f"namespace {parts!r}: a profile is (org, user, 'profile')")
    check_labels(labels)
    return Target(org_id, owner, kind, labels)


def check_labels(labels: Sequence[str]) -> None:
    if len(labels) > MAX_LABELS:
        raise NamespaceError(f"a namespace takes at most {MAX_LABELS} labels after 'facts'")
    for label in labels:
        if not label or len(label) > MAX_LABEL_LENGTH or "\x00" in label:
            raise NamespaceError(
                f"namespace label {label[:40]!r} must be 1-{MAX_LABEL_LENGTH} characters"
            )


def check_key(key: str) -> str:
    if not isinstance(key, str) or not key or len(key) > MAX_KEY_LENGTH or "\x00" in key:
        raise NamespaceError(f"an item key must be 1-{MAX_KEY_LENGTH} characters")
    return key


def tenants_of(prefix: Sequence[str]) -> tuple[str, str] | None:
    """The `(org, owner)` a search or listing prefix names, or None when it names fewer."""
    parts = tuple(prefix)
    if len(parts) < 2 or "*" in parts[:2]:
        return None
    return tenant(parts[0], parts[1])


def normal_prefix(prefix: Sequence[str]) -> tuple[str, ...]:
    """`prefix` with its `(org, owner)` normalised as stored ("Acme" finds "acme")."""
    parts = tuple(prefix)
    named = tenants_of(parts)
    return parts if named is None else (*named, *parts[2:])


def matches_prefix(namespace: Sequence[str], prefix: Sequence[str]) -> bool:
    """`prefix` is a leading part of `namespace` (`*` matches any one element)."""
    return len(prefix) <= len(namespace) and all(
        p == "*" or p == n for p, n in zip(prefix, namespace, strict=False)
    )


def matches_suffix(namespace: Sequence[str], suffix: Sequence[str]) -> bool:
    """`suffix` is a trailing part of `namespace` (`*` matches any one element)."""
    if len(suffix) > len(namespace):
        return False
    tail = namespace[len(namespace) - len(suffix) :]
    return all(s == "*" or s == n for s, n in zip(suffix, tail, strict=True))
