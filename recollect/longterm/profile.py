"""The user profile: one small, versioned document per user, always in context.

Fields are either single-valued (name, role, timezone, ...: a new value replaces the old) or
lists capped at `ProfilePolicy.max_values` (the oldest value is evicted). The document carries
a `schema_version`; older versions are migrated when read and written back in the current
shape on the next update, so no data migration is ever needed. A version newer than this code
knows fails loudly instead of being misread or overwritten.

Concurrent writers never lose an update: each write is conditional on the `revision` it read
(optimistic check); a writer that lost the race re-reads and re-applies its change. Under READ
COMMITTED that works inside a caller's longer transaction too, because each statement sees
the latest committed document.

No value is stored with a credential in it: each is masked (`mask_secrets`) as it is applied,
and one that is nothing but placeholders then is not stored at all.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from psycopg import Connection
from psycopg.types.json import Jsonb

from recollect.gate import mask_secrets
from recollect.longterm.imperatives import addressed_to_assistant
from recollect.longterm.records import FactCategory, NewFact, ProfileEntry, StoredFact
from recollect.store import clock
from recollect.store.scope import Scope

CURRENT_VERSION = 2
"""1: a flat {field: value} map (the original key/value rows); 2: {field: [values]}."""
SINGLE_FIELDS = frozenset({"name", "role", "timezone", "location", "language", "pronouns"})
CATEGORY_FIELDS: dict[str, str] = {
    FactCategory.PREFERENCE: "preferences",
    FactCategory.CONSTRAINT: "constraints",
}
"""Categories that shape every answer; goals and the stack are recalled when relevant."""
MAX_WRITE_ATTEMPTS = 100
MAX_VALUE_LENGTH = 500
_FIELD = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
_PLACEHOLDER = re.compile(r"\[[A-Z_]+\]")
"""A redacted value ("Email is [EMAIL]") says nothing worth a place in every prompt."""

SELECT_PROFILE = """
SELECT revision, schema_version, document, updated_at FROM profiles
WHERE org_id = %(org_id)s AND user_id = %(user_id)s
"""

INSERT_PROFILE = """
INSERT INTO profiles (org_id, user_id, revision, schema_version, document)
VALUES (%(org_id)s, %(user_id)s, 1, %(schema_version)s, %(document)s)
ON CONFLICT (org_id, user_id) DO NOTHING
"""

UPDATE_PROFILE = """
UPDATE profiles SET revision = revision + 1, schema_version = %(schema_version)s,
    document = %(document)s, updated_at = now()
WHERE org_id = %(org_id)s AND user_id = %(user_id)s AND revision = %(revision)s
"""


class ProfileVersionError(RuntimeError):
    """The stored profile was written by a newer release; reading it would lose fields."""


class ProfileConflictError(RuntimeError):
    """Too many concurrent writers in a row; nothing was written, the caller may retry."""


@dataclass(frozen=True)
class ProfilePolicy:
    """How much a profile may hold; `from_env` reads `RECOLLECT_PROFILE_*`."""

    max_values: int = 5
    """Per list field; the oldest value is evicted past this."""
    max_fields: int = 24

    @classmethod
    def from_env(cls) -> ProfilePolicy:
        values = os.environ.get("RECOLLECT_PROFILE_MAX_VALUES")
        fields = os.environ.get("RECOLLECT_PROFILE_MAX_FIELDS")
        return cls(
            max_values=int(values) if values else 5, max_fields=int(fields) if fields else 24
        )


@dataclass(frozen=True)
class ProfileUpdate:
    """One value for one field; `fact_id` links it to the fact it came from."""

    field: str
    value: str
    confidence: float = 0.9
    fact_id: str | None = None
    replace: bool = False
    """Drop the field's other values (single-valued fields always do)."""
    at: datetime | None = None
    """When the value became true (a fact's `learned_at`, a plan's day); the clock's now if
    not given."""

    def __post_init__(self) -> None:
        if not _FIELD.fullmatch(self.field):
            raise ValueError(
                f"profile field {self.field!r} must be lower_snake_case, 1-64 characters"
            )
        if not self.value.strip():
            raise ValueError(f"profile field {self.field!r} needs a non-empty value")
        if len(self.value) > MAX_VALUE_LENGTH:
            raise ValueError(
                f"profile value for {self.field!r} exceeds {MAX_VALUE_LENGTH} characters"
            )
        if addressed_to_assistant(self.value):
            raise ValueError(
                f"profile value for {self.field!r} is an instruction to the assistant, not "
                "something about the user"
            )


@dataclass
class Profile:
    """The current-version document: field → values, oldest first."""

    fields: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    revision: int = 0
    updated_at: datetime | None = None

    def values(self, name: str) -> list[str]:
        return [str(v["value"]) for v in self.fields.get(name, [])]

    def entries(self) -> list[ProfileEntry]:
        """One entry per field, in field order, for the prompt's "User profile" section."""
        out = []
        for name in sorted(self.fields):
            values = self.fields[name]
            if not values:
                continue
            out.append(
                ProfileEntry(
                    key=name,
                    value="; ".join(str(v["value"]) for v in values)[:2000],
                    confidence=max(float(v.get("confidence", 0.9)) for v in values),
                    updated_at=self.updated_at,
                )
            )
        return out


def migrate_document(version: int, document: Any) -> dict[str, list[dict[str, Any]]]:
    """Any known version in, the current shape out; a newer or unknown version raises."""
    if version == CURRENT_VERSION:
        return {k: list(v) for k, v in dict(document.get("fields", {})).items()}
    if version == 1:
        return {
            str(k): [{"value": str(v), "confidence": 0.9, "at": None, "fact_id": None}]
            for k, v in dict(document).items()
        }
    raise ProfileVersionError(
        f"stored profile has schema_version {version}, but this release reads versions 1 to "
        f"{CURRENT_VERSION}; upgrade recollect before reading or writing this profile"
    )


def from_row(row: dict[str, Any] | None) -> Profile:
    """A stored row (or none) as a current-version `Profile`."""
    if row is None:
        return Profile()
    return Profile(
        fields=migrate_document(int(row["schema_version"]), row["document"]),
        revision=int(row["revision"]),
        updated_at=row["updated_at"],
    )


def read_profile(conn: Connection[Any], scope: Scope) -> Profile:
    return from_row(conn.execute(SELECT_PROFILE, _params(scope)).fetchone())


def update_profile(
    conn: Connection[Any],
    scope: Scope,
    updates: Sequence[ProfileUpdate],
    *,
    forget_fact_ids: Iterable[str] = (),
    policy: ProfilePolicy | None = None,
) -> Profile:
    """Apply `updates` (and drop values whose fact was superseded) without losing a racing
    writer's change; returns the document as written."""
    policy = policy or ProfilePolicy()
    forget = set(forget_fact_ids)
    params = _params(scope)
    for _ in range(MAX_WRITE_ATTEMPTS):
        row = conn.execute(SELECT_PROFILE, params).fetchone()
        profile = from_row(row)
        _apply(profile, updates, forget, policy)
        written = {
            **params,
            "schema_version": CURRENT_VERSION,
            "document": Jsonb({"fields": profile.fields}),
            "revision": profile.revision,
        }
        cur = conn.execute(INSERT_PROFILE if row is None else UPDATE_PROFILE, written)
        if cur.rowcount == 1:
            profile.revision += 1
            return profile
    raise ProfileConflictError(
        f"profile of {scope.org_id}/{scope.user_id}: {MAX_WRITE_ATTEMPTS} concurrent updates "
        "won the race in a row; nothing written"
    )


def updates_for(fact: NewFact, fact_id: str) -> list[ProfileUpdate]:
    """The profile field an accepted fact feeds, if any (subject names a single field)."""
    if _PLACEHOLDER.search(fact.text) or addressed_to_assistant(fact.text):
        return []
    subject = (fact.subject or "").strip().lower()
    value = fact.text.strip()
    if subject in SINGLE_FIELDS:
        name = subject
        prefix = f"{subject} is "
        if value.lower().startswith(prefix) and len(value) > len(prefix):
            value = value[len(prefix) :]  # "Name is Dana" → "Dana"
    else:
        mapped = CATEGORY_FIELDS.get(str(fact.category))
        if mapped is None:
            return []
        name = mapped
    return [
        ProfileUpdate(
            name, value[:MAX_VALUE_LENGTH], min(fact.confidence, 1.0), fact_id, at=fact.learned_at
        )
    ]


def profile_now(
    stored: Profile,
    changes: Iterable[StoredFact],
    now: datetime,
    policy: ProfilePolicy | None = None,
) -> Profile:
    """The stored document as it reads at `now`, when plans may have started since it was
    written (nothing runs on a plan's day): the values of the facts a plan ended are gone, and
    each plan that began fills its field, unless the field was set after the plan's day.
    `changes` are the rows `fact_sql.PLAN_DAYS` reads, oldest day first."""
    changes = list(changes)
    if not changes:
        return stored
    policy = policy or ProfilePolicy()
    ended = {f.id for f in changes if f.valid_to is not None and f.valid_to <= now}
    then = Profile(
        fields={name: list(values) for name, values in stored.fields.items()},
        revision=stored.revision,
        updated_at=stored.updated_at,
    )
    _apply(then, [], ended, policy)
    for plan in changes:
        if plan.id in ended or not plan.valid_from > plan.learned_at:
            continue
        offered = NewFact(
            text=plan.text,
            category=plan.category,
            subject=plan.subject,
            confidence=plan.confidence,
            learned_at=plan.valid_from,
        )
        fresh = [
            u
            for u in updates_for(offered, plan.id)
            if not any(
                v.get("fact_id") == plan.id or _set_by(v, plan.valid_from, after=True)
                for v in then.fields.get(u.field, [])
            )
        ]
        _apply(then, fresh, set(), policy)
    return then


def profile_as_of(
    current: Profile,
    facts: Iterable[StoredFact],
    as_of: datetime,
    policy: ProfilePolicy | None = None,
) -> Profile:
    """The profile as it stood at `as_of`: rebuilt from the facts true then (oldest first,
    each feeding its field as the write path did), plus the values set by hand by then."""
    policy = policy or ProfilePolicy()
    kept = {
        name: [v for v in values if v.get("fact_id") is None and _set_by(v, as_of)]
        for name, values in current.fields.items()
    }
    then = Profile(fields={k: v for k, v in kept.items() if v}, updated_at=as_of)
    for fact in facts:
        offered = NewFact(
            text=fact.text,
            category=fact.category,
            subject=fact.subject,
            confidence=fact.confidence,
        )
        _apply(then, updates_for(offered, fact.id), set(), policy)
    return then


def _set_by(value: dict[str, Any], as_of: datetime, *, after: bool = False) -> bool:
    """Whether the value was set by `as_of` (one with no time always was); with `after`,
    whether it was set later than `as_of` instead."""
    at = value.get("at")
    if at is None:
        return not after
    later = datetime.fromisoformat(str(at)) > as_of
    return later if after else not later


def _apply(
    profile: Profile, updates: Sequence[ProfileUpdate], forget: set[str], policy: ProfilePolicy
) -> None:
    fields = profile.fields
    if forget:
        for name in list(fields):
            fields[name] = [v for v in fields[name] if v.get("fact_id") not in forget]
    now = clock.now()
    for update in updates:
        text = mask_secrets(update.value.strip())
        if not _PLACEHOLDER.sub("", text).strip(" .,;:"):
            continue  # a secret and nothing else: nothing worth a place in every prompt
        value: dict[str, Any] = {
            "value": text,
            "confidence": update.confidence,
            "at": (update.at or now).isoformat(),
            "fact_id": update.fact_id,
        }
        if update.field in SINGLE_FIELDS or update.replace:
            fields[update.field] = [value]
            continue
        kept = [
            v for v in fields.get(update.field, [])
            if str(v["value"]).casefold() != text.casefold()
        ]  # fmt: skip
        fields[update.field] = [*kept, value][-policy.max_values :]
    for name in [n for n, v in fields.items() if not v]:
        del fields[name]
    while len(fields) > policy.max_fields:  # evict the field updated longest ago
        del fields[min(fields, key=lambda n: str(fields[n][-1].get("at") or ""))]


def _params(scope: Scope) -> dict[str, Any]:
    return {"org_id": scope.org_id, "user_id": scope.user_id}
