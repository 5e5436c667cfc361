"""`RecollectStore`: LangGraph's `BaseStore` over the long-term memory engine.

Studio, the SDK's `client.store.*`, `runtime.store` and langmem's tools speak `BaseStore`;
this puts the engine behind it. Namespaces name scopes (`recollect.basestore.namespaces`);
an item in `(org, user, "facts", ...)` is a handle on one fact: `put` screens, redacts and
validates the value like an extracted fact and writes it through the engine's write path
(near duplicates reinforce, contradictions supersede, the profile follows); `search(query=)`
ranks every item the listing shows by a relevance in [0, 1] (`recollect.basestore.relevance`);
`delete` soft-deletes the fact once no item names it; `ttl` (minutes) expires the item and
then its fact. Every statement runs in its namespace's scope, so row-level security decides,
and inside a served request a namespace outside the caller's `(org, user)` is refused.

A batch is checked whole before any of it runs: a bad namespace, key or value fails it with
one line and nothing is written.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)
from psycopg import Connection
from psycopg.types.json import Jsonb

from recollect.auth.identity import Identity
from recollect.auth.served import served_identity
from recollect.basestore import item_sql as sql
from recollect.basestore.namespaces import (
    SHARED,
    Kind,
    NamespaceError,
    Target,
    check_key,
    matches_prefix,
    matches_suffix,
    normal_prefix,
    parse,
    tenants_of,
)
from recollect.basestore.relevance import calibrated, cosine, word_coverage
from recollect.basestore.values import (
    Offered,
    ValueRejectedError,
    check_ttl,
    fact_value,
    is_fact_id,
    item_text,
    matches,
    offered,
)
from recollect.extraction.validation import FactScreen, ValidationPolicy
from recollect.longterm.fact_sql import LOCK_USER
from recollect.longterm.facts import WRITTEN_BY, LongTermMemory, writable
from recollect.longterm.plans import PLAN_KEY
from recollect.longterm.profile import ProfileUpdate, updates_for
from recollect.longterm.recall import has_content, query_vector, relevance_floor
from recollect.longterm.records import NewFact, ProfileEntry, RememberAction, StoredFact
from recollect.longterm.vectors import embed_texts, literal
from recollect.store import clock
from recollect.store.scope import Scope
from recollect.store.tenancy import scoped

MAX_LIMIT = 1000
"""Items one search or listing returns at most."""
PROFILE = Kind.PROFILE.value
FIELD_VECTORS = 4096
"""Profile fields' embeddings a store keeps between searches (all dropped when full)."""


class ForeignNamespaceError(NamespaceError):
    """The namespace belongs to another user or organisation than the caller's."""


@dataclass(frozen=True)
class _Found:
    """One item as read, with the fact it names (None for a profile field)."""

    item: SearchItem
    fact_id: str | None
    expires: bool = False
    """Whether the item has a ttl (only those are refreshed on read)."""


class RecollectStore(BaseStore):
    """The engine as a LangGraph store; build it over a configured `LongTermMemory`.

    `identity` is whom the store acts for outside a served request (a script, the CLI): it
    names the writer of organisation-shared facts and bounds searches and listings that name
    no user. Inside `langgraph dev` or LangGraph Platform, the authenticated caller does.
    """

    supports_ttl = True

    def __init__(
        self,
        memory: LongTermMemory,
        *,
        identity: Identity | None = None,
        policy: ValidationPolicy | None = None,
    ) -> None:
        self.memory = memory
        self.identity = identity
        self.policy = policy or ValidationPolicy.from_env()
        self._embedded_fields: dict[str, list[float]] = {}

    # --- BaseStore -----------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Check every operation, then run them in order (each in its own transaction)."""
        listed = list(ops)
        checked = [self._check(op) for op in listed]
        return [self._run(op, plan) for op, plan in zip(listed, checked, strict=True)]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """`batch` on a worker thread: the engine's pool is synchronous."""
        return await asyncio.to_thread(self.batch, list(ops))

    # --- checking ------------------------------------------------------------------------

    def _caller(self) -> Identity | None:
        return served_identity() or self.identity

    def _permit(self, org_id: str, owner: str) -> None:
        caller = self._caller()
        if caller is None:
            return
        if org_id != caller.org_id or owner not in (caller.user_id, SHARED):
            raise ForeignNamespaceError(
                f"namespace ({org_id!r}, {owner!r}, ...) is not yours: store namespaces start "
                f"with ({caller.org_id!r}, {caller.user_id!r}) or ({caller.org_id!r}, {SHARED!r})"
            )

    def _target(self, namespace: Sequence[str]) -> Target:
        target = parse(namespace)
        self._permit(target.org_id, target.owner)
        return target

    def _check(self, op: Op) -> Any:
        if isinstance(op, GetOp):
            check_key(op.key)
            return self._target(op.namespace)
        if isinstance(op, PutOp):
            check_key(op.key)
            target = self._target(op.namespace)
            where = f"item {op.key[:60]!r} in {target.namespace()!r}"
            check_ttl(op.ttl, where)
            if target.shared:  # refused now, not halfway through the batch
                writable(self._scope(target))
            if op.value is None:
                if target.kind is Kind.PROFILE:
                    raise ValueRejectedError(
                        f"{where}: profile fields are replaced by a put, not deleted "
                        "(`recollect memory forget` removes what a fact put there)"
                    )
                return target
            if target.kind is Kind.PROFILE:
                return target, self._profile_entry(op.key, op.value, where)
            return target, offered(op.value, self.policy, where)
        if isinstance(op, SearchOp):
            _check_page(op.limit, op.offset)
            if op.query is not None and not isinstance(op.query, str):
                raise ValueError("a search query must be text")
            return self._owners(op.namespace_prefix)
        if isinstance(op, ListNamespacesOp):
            _check_page(op.limit, op.offset)
            prefix = next(
                (c.path for c in op.match_conditions or () if c.match_type == "prefix"), ()
            )
            return self._owners(prefix)
        raise ValueError(f"unknown store operation {type(op).__name__}")

    def _writer(self) -> str | None:
        caller = self._caller()
        return caller.user_id if caller is not None else None

    def _scope(self, target: Target) -> Scope:
        """The scope a target's statements run in, with the caller's permissions (an
        organisation write needs `org_admin`)."""
        caller = self._caller()
        permissions = caller.permissions if caller is not None else frozenset()
        return target.scope(self._writer(), permissions)

    def _owners(self, prefix: Sequence[str]) -> list[Target]:
        """The `(org, owner)` pairs a search or listing reaches, as facts targets."""
        named = tenants_of(prefix)
        if named is not None:
            self._permit(*named)
            return [Target(named[0], named[1], Kind.FACTS)]
        caller = self._caller()
        if caller is None:
            raise NamespaceError(
                f"prefix {tuple(prefix)!r} names no (org, user): outside a served request, "
                "start it with both, or build the store with identity="
            )
        own = [Target(caller.org_id, o, Kind.FACTS) for o in (caller.user_id, SHARED)]
        return [t for t in own if matches_prefix((t.org_id, t.owner), tuple(prefix)[:2])]

    def _profile_entry(self, key: str, value: Any, where: str) -> ProfileEntry:
        text = value.get("value") if isinstance(value, dict) else None
        if not isinstance(text, str):
            raise ValueRejectedError(f"{where}: a profile value is {{'value': '<text>'}}")
        verdict = FactScreen(self.policy).check(text)
        if not verdict.accepted:
            raise ValueRejectedError(f"{where} not stored: {'; '.join(verdict.reasons)}")
        try:
            ProfileUpdate(key, verdict.text)  # the field's name and size, checked up front
            return ProfileEntry(
                key=key, value=verdict.text, confidence=value.get("confidence", 0.9)
            )
        except ValueError as exc:
            raise ValueRejectedError(f"{where}: {' '.join(str(exc).split())[:200]}") from exc

    # --- running -------------------------------------------------------------------------

    def _run(self, op: Op, plan: Any) -> Result:
        if isinstance(op, GetOp):
            return self._get(plan, op.key, op.refresh_ttl)
        if isinstance(op, PutOp):
            if op.value is None:
                self._delete(plan, op.key)
            elif plan[0].kind is Kind.PROFILE:
                self.memory.set_profile(self._scope(plan[0]), [plan[1]])
            else:
                self._put(plan[0], op.key, plan[1], op.ttl)
            return None
        if isinstance(op, SearchOp):
            return self._search(plan, op)
        assert isinstance(op, ListNamespacesOp)
        return self._list_namespaces(plan, op)

    def _read_scope(self, target: Target) -> Scope:
        """Reads of the organisation's facts run as the reading user (any member may read)."""
        if target.shared:
            writer = self._writer()
            if writer is None:
                target.scope(None)  # raises the one-line error
            return Scope.for_user(target.org_id, str(writer))
        return Scope.for_user(target.org_id, target.owner)

    def _params(self, target: Target, key: str | None = None) -> dict[str, Any]:
        return {
            "org_id": target.org_id,
            "user_id": target.owner,
            "labels": list(target.labels),
            "key": key,
            "now": clock.now(),
        }

    def _get(self, target: Target, key: str, refresh: bool) -> Item | None:
        if target.kind is Kind.PROFILE:
            return next((f.item for f in self._profile_items(target) if f.item.key == key), None)
        params = self._params(target, key)
        with scoped(self.memory.pool, self._read_scope(target)) as conn:
            conn.execute(sql.SWEEP_EXPIRED, params)
            row = conn.execute(sql.ITEM, params).fetchone()
            if row is not None:
                if refresh:
                    conn.execute(sql.REFRESH_TTL, params)
                return _as_item(target.org_id, target.owner, row).item
            if target.labels or not is_fact_id(key):
                return None
            bare = conn.execute(sql.BARE_FACT, {**params, "id": key}).fetchone()
        if bare is None:
            return None
        return _bare_item(target.org_id, target.owner, StoredFact.model_validate(bare)).item

    def _put(self, target: Target, key: str, offer: Offered, ttl: float | None) -> None:
        scope = self._scope(target)
        params = self._params(target, key)
        vector = self.memory.embed_one(offer.fact.text)  # outside the transaction
        with scoped(self.memory.pool, scope) as conn:
            conn.execute(LOCK_USER, params)  # two puts of one key cannot both write a fact
            conn.execute(sql.SWEEP_EXPIRED, params)
            old = conn.execute(sql.ITEM_FOR_UPDATE, params).fetchone()
            if old is not None and old["alive"] and old["fact_text"] == offer.fact.text:
                fact_id = str(old["fact_id"])  # the same fact: only the value changes
            else:
                fact = offer.fact
                if old is not None and old["alive"] and old["others"] == 0:
                    fact = fact.model_copy(update={"replaces": (str(old["fact_id"]),)})
                fact_id = self._remember(conn, scope, target, fact, vector)
            conn.execute(
                sql.UPSERT_ITEM,
                {**params, "fact_id": fact_id, "value": Jsonb(offer.value), "ttl": ttl},
            )
            if old is not None and str(old["fact_id"]) != fact_id:
                self._drop_unnamed(conn, scope, target, str(old["fact_id"]), live_only=True)

    def _remember(
        self,
        conn: Connection[Any],
        scope: Scope,
        target: Target,
        fact: NewFact,
        vector: list[float] | None,
    ) -> str:
        """The engine's write path; a user's profile follows as it does for extraction
        (`EngineWriter`), with the vector embedded before the transaction began."""
        if target.shared:
            return self.memory.remember_in(conn, scope, fact, vector=vector).fact.id
        result = self.memory.remember_in(conn, scope, fact, vector=vector)
        if result.action is not RememberAction.INSERTED_STALE:
            planned = bool(result.fact.metadata.get(PLAN_KEY))  # it changes no field yet
            self.memory.update_profile_in(
                conn,
                scope,
                [] if planned else updates_for(fact, result.fact.id),
                forget_fact_ids=result.replaced,
            )
        return result.fact.id

    def _drop_unnamed(
        self, conn: Connection[Any], scope: Scope, target: Target, fact_id: str, *, live_only: bool
    ) -> None:
        """Soft-delete a fact no item names any more (and its profile values)."""
        statement = sql.FORGET_UNNAMED_LIVE if live_only else sql.FORGET_UNNAMED
        params = {
            "org_id": target.org_id,
            "user_id": target.owner,
            "fact_id": fact_id,
            "now": clock.now(),
        }
        if conn.execute(statement, params).rowcount and not target.shared:
            self.memory.update_profile_in(conn, scope, [], forget_fact_ids=[fact_id])

    def _delete(self, target: Target, key: str) -> None:
        scope = self._scope(target)
        params = self._params(target, key)
        with scoped(self.memory.pool, scope) as conn:
            row = conn.execute(sql.DELETE_ITEM, params).fetchone()
            if row is not None:
                self._drop_unnamed(conn, scope, target, str(row["fact_id"]), live_only=False)
                return
            if target.labels or not is_fact_id(key):
                return
            if conn.execute(sql.BARE_FACT, {**params, "id": key}).fetchone() is not None:
                conn.execute(sql.FORGET_FACT, {**params, "fact_id": key})
                if not target.shared:
                    self.memory.update_profile_in(conn, scope, [], forget_fact_ids=[key])

    def _owner_items(self, owner: Target, prefix: Sequence[str]) -> list[_Found]:
        """Every visible item of one owner under `prefix`, newest first, profile last."""
        params = self._params(owner)
        base = (owner.org_id, owner.owner, Kind.FACTS.value)
        with scoped(self.memory.pool, self._read_scope(owner)) as conn:
            conn.execute(sql.SWEEP_EXPIRED, params)
            found = [
                _as_item(owner.org_id, owner.owner, r) for r in conn.execute(sql.ITEMS, params)
            ]
            if _reaches(prefix, base):
                found += [
                    _bare_item(owner.org_id, owner.owner, StoredFact.model_validate(r))
                    for r in conn.execute(sql.BARE_FACTS, params)
                ]
        found = [f for f in found if matches_prefix(f.item.namespace, prefix)]
        profile = Target(owner.org_id, owner.owner, Kind.PROFILE)
        if not owner.shared and _reaches(prefix, profile.namespace()):
            found += self._profile_items(profile)
        return found

    def _profile_items(self, target: Target) -> list[_Found]:
        profile = self.memory.profile(Scope.for_user(target.org_id, target.owner))
        at = profile.updated_at or clock.now()
        namespace = (target.org_id, target.owner, PROFILE)
        return [
            _Found(
                SearchItem(
                    namespace,
                    name,
                    {
                        "value": "; ".join(profile.values(name)),
                        "values": profile.values(name),
                        "confidence": max(float(v.get("confidence", 0.9)) for v in values),
                    },
                    at,
                    at,
                ),
                None,
            )
            for name, values in sorted(profile.fields.items())
            if values
        ]

    def _search(self, owners: list[Target], op: SearchOp) -> list[SearchItem]:
        """The listing under the prefix, filtered; with a query, every listed item scored
        (`recollect.basestore.relevance`) and best first, so a search never hides an item the
        listing shows. Then the page."""
        prefix = normal_prefix(op.namespace_prefix)
        found = [f for owner in owners for f in self._owner_items(owner, prefix)]
        if len(owners) > 1:
            found.sort(key=lambda f: f.item.updated_at, reverse=True)
        kept = [f for f in found if matches(f.item.value, _conditions(op.filter))]
        if op.query:
            kept = self._by_relevance(kept, op.query)
        page = kept[op.offset : op.offset + op.limit]
        if op.refresh_ttl:  # only items that expire: most have no ttl, and reads stay reads
            self._refresh([f.item for f in page if f.expires])
        return [f.item for f in page]

    def _by_relevance(self, found: list[_Found], query: str) -> list[_Found]:
        """`found` scored against `query`, best first (ties keep the listing's order)."""
        if not has_content(query):  # "is it", "and then what": nothing in memory answers it
            return [_Found(_scored(f.item, 0.0), f.fact_id, f.expires) for f in found]
        memory = self.memory
        vector = query_vector(memory.embedder, query, memory.recipe)
        floor = relevance_floor(memory.recipe, memory.embedder) or 0.0
        similarity = self._similarities(found, vector) if vector is not None else {}
        scored = []
        for f in found:
            text = _searched_text(f.item)
            cos = similarity.get(f.fact_id or "") if f.fact_id else similarity.get(text)
            score = calibrated(cos, floor) if cos is not None else word_coverage(query, text)
            scored.append(_Found(_scored(f.item, score), f.fact_id, f.expires))
        scored.sort(key=lambda f: -(f.item.score or 0.0))
        return scored

    def _similarities(self, found: list[_Found], vector: list[float]) -> dict[str, float]:
        """The cosine of each found item to the query: a fact's from its stored embedding
        (keyed by fact id), a profile field's from embedding it now (keyed by its text)."""
        owners: dict[tuple[str, str], list[str]] = {}
        for f in found:
            if f.fact_id is not None:
                owners.setdefault((f.item.namespace[0], f.item.namespace[1]), []).append(f.fact_id)
        out: dict[str, float] = {}
        for (org_id, owner), ids in owners.items():
            params = {"ids": ids, "vector": literal(vector), "dim": len(vector)}
            with scoped(self.memory.pool, self._read_scope(Target(org_id, owner, Kind.FACTS))) as c:
                rows = c.execute(sql.SIMILARITIES, params).fetchall()
            out.update(
                {r["id"]: float(r["similarity"]) for r in rows if r["similarity"] is not None}
            )
        fields = list(dict.fromkeys(_searched_text(f.item) for f in found if f.fact_id is None))
        for text, embedded in zip(fields, self._field_vectors(fields), strict=True):
            cos = cosine(vector, embedded) if embedded is not None else None
            if cos is not None:
                out[text] = cos
        return out

    def _field_vectors(self, texts: list[str]) -> list[list[float] | None]:
        """Profile fields' embeddings, kept by text: a profile changes far less often than it
        is searched, and embedding is most of a search's cost."""
        missing = [t for t in texts if t not in self._embedded_fields]
        if missing:
            if len(self._embedded_fields) + len(missing) > FIELD_VECTORS:
                self._embedded_fields.clear()
            vectors = embed_texts(self.memory.embedder, missing)
            self._embedded_fields.update(
                (t, v) for t, v in zip(missing, vectors, strict=True) if v is not None
            )
        return [self._embedded_fields.get(t) for t in texts]

    def _refresh(self, items: Sequence[SearchItem]) -> None:
        for item in items:
            target = Target(item.namespace[0], item.namespace[1], Kind.FACTS, item.namespace[3:])
            params = self._params(target, item.key)
            with scoped(self.memory.pool, self._read_scope(target)) as conn:
                conn.execute(sql.REFRESH_TTL, params)

    def _list_namespaces(self, owners: list[Target], op: ListNamespacesOp) -> list[tuple[str, ...]]:
        seen: set[tuple[str, ...]] = set()
        for owner in owners:
            seen.update(f.item.namespace for f in self._owner_items(owner, ()))
        for condition in op.match_conditions or ():
            if condition.match_type == "prefix":
                seen = {ns for ns in seen if matches_prefix(ns, normal_prefix(condition.path))}
            else:
                seen = {ns for ns in seen if matches_suffix(ns, tuple(condition.path))}
        if op.max_depth is not None:
            seen = {ns[: op.max_depth] for ns in seen}
        return sorted(seen)[op.offset : op.offset + op.limit]


def _check_page(limit: int, offset: int) -> None:
    if not 0 <= limit <= MAX_LIMIT:
        raise ValueError(f"limit must be from 0 to {MAX_LIMIT}, got {limit}")
    if offset < 0:
        raise ValueError(f"offset must not be negative, got {offset}")


def _reaches(prefix: Sequence[str], namespace: Sequence[str]) -> bool:
    """Whether items in `namespace` (or below it) can match `prefix`."""
    shared = min(len(prefix), len(namespace))
    return matches_prefix(tuple(namespace)[:shared], tuple(prefix)[:shared])


def _conditions(raw: dict[str, Any] | None) -> dict[str, Any]:
    """A filter, with the served API's `{"$and": [a, b]}` (its auth filter) folded in."""
    if not raw:
        return {}
    merged: dict[str, Any] = {}
    for name, condition in raw.items():
        if name == "$and" and isinstance(condition, list):
            for part in condition:
                merged.update(_conditions(part))
        else:
            merged[name] = condition
    return merged


def _as_item(org_id: str, owner: str, row: dict[str, Any]) -> _Found:
    namespace = (org_id, owner, Kind.FACTS.value, *row["labels"])
    value = row["value"]
    if owner == SHARED and row.get("written_by"):  # who wrote (or last changed) a shared item
        value = {**value, WRITTEN_BY: row["written_by"]}
    return _Found(
        SearchItem(namespace, row["key"], value, row["created_at"], row["updated_at"]),
        str(row["fact_id"]),
        row["expires_at"] is not None,
    )


def _bare_item(org_id: str, owner: str, fact: StoredFact) -> _Found:
    namespace = (org_id, owner, Kind.FACTS.value)
    return _Found(
        SearchItem(namespace, fact.id, fact_value(fact), fact.learned_at, fact.last_reinforced_at),
        fact.id,
    )


def _searched_text(item: SearchItem) -> str:
    """What a query is compared with: a fact's text, or a profile field as `name: value`."""
    if item.namespace[2] == PROFILE:
        return f"{item.key}: {item.value.get('value', '')}"
    return item_text(item.value)


def _scored(item: SearchItem, score: float) -> SearchItem:
    return SearchItem(
        item.namespace, item.key, item.value, item.created_at, item.updated_at, round(score, 6)
    )
