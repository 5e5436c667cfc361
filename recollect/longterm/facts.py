"""Long-term memory: the write path (reinforce, supersede, batch ingest) and the public API.

Every statement runs inside `scoped(pool, scope)`, so row-level security applies unchanged.
The read path lives in `recollect.longterm.recall`; `LongTermMemory.recall` is its front door.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import datetime
from functools import partial
from typing import Any

from langchain_core.embeddings import Embeddings
from psycopg import Connection
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from recollect.longterm import fact_sql as sql
from recollect.longterm.cues import only_retracts, says_plan
from recollect.longterm.duplicates import near_duplicate_similarity
from recollect.longterm.encodings import PENDING_LIMIT, persist_pending
from recollect.longterm.plan_dates import planned_start
from recollect.longterm.plans import PLAN_KEY, held_until_plan, plan_subject
from recollect.longterm.presence import DensePresence
from recollect.longterm.profile import (
    Profile,
    ProfilePolicy,
    ProfileUpdate,
    profile_as_of,
    profile_now,
    read_profile,
    update_profile,
)
from recollect.longterm.recall import (
    afetch_from,
    counted,
    dense_found,
    finishes_lightly,
    plan_recall,
    plans_lightly,
)
from recollect.longterm.recall import finish as finish_recall
from recollect.longterm.recall import recall as recall_scope
from recollect.longterm.recipe import NO_FLOOR, RecallRecipe
from recollect.longterm.records import (
    NewEpisode,
    NewFact,
    ProfileEntry,
    Recollection,
    RememberAction,
    RememberResult,
    StoredFact,
)
from recollect.longterm.rerankers import Reranker, late_interaction_of
from recollect.longterm.rule_judge import RuleJudge
from recollect.longterm.scope_sizes import ScopeSizes
from recollect.longterm.subjects import infer_subject, is_multi_valued, normalise_subject
from recollect.longterm.supersession import ContradictionJudge, Neighbour, decide
from recollect.longterm.vectors import Vector, VectorTypes, checked, embed_texts, literal
from recollect.store import clock
from recollect.store.identity import MAX_ID_LENGTH
from recollect.store.offload import offloaded, offloaded_unless_light
from recollect.store.schema.centred_codes import CENTRED_FROM
from recollect.store.schema.long_term import COVERED_MAX_DIM
from recollect.store.scope import ORG_ADMIN, Scope, ScopeKind
from recollect.store.tenancy import scoped

REINFORCEMENT_GAIN = 0.5
"""Share of the new fact's confidence that closes the gap to 1 on each reinforcement."""
INGEST_BATCH = 5000
RELATED_LIMIT = 20
"""How many known facts an extraction call is shown (its prompt grows with each)."""
NEIGHBOURS = 5
"""The nearest facts a write weighs as repeats or contradictions, besides those of the same
subject or text."""
RETRACTION_KEY = "retraction"
"""Metadata flag of a statement that only took a value back: stored closed, never live."""

log = logging.getLogger(__name__)


class UnsupportedScopeError(ValueError):
    """Profiles and episodes are personal: they have no organisation-shared form."""


class SharedWriteRefusedError(PermissionError):
    """Writing the organisation's shared memory needs the `org_admin` permission."""


def writable(scope: Scope) -> Scope:
    """`scope`, refused when it writes the organisation's memory without `org_admin` (row-level
    security refuses it too; this says so in one line before anything is embedded)."""
    if scope.kind is ScopeKind.ORG and not scope.is_org_admin:
        raise SharedWriteRefusedError(
            f"writing {scope.org_id!r}'s shared memory needs the {ORG_ADMIN!r} permission; "
            f"{scope.user_id!r} reads it only"
        )
    return scope


def personal(scope: Scope) -> Scope:
    """`scope`, refused when it is the organisation's (profiles and episodes are per user)."""
    if scope.kind is ScopeKind.ORG:
        raise UnsupportedScopeError(
            "profiles and episodes are per user or per session; org scope shares facts only"
        )
    return scope


WRITTEN_BY = "written_by"
"""The metadata key naming who wrote an organisation-shared fact (set here from the writing
scope, whatever the caller's metadata said; `facts.author_id` holds it too)."""


def signed(fact: NewFact, scope: Scope) -> dict[str, Any]:
    """A fact's metadata, naming its writer when it goes into the organisation's memory."""
    if scope.kind is not ScopeKind.ORG:
        return fact.metadata
    return {**fact.metadata, WRITTEN_BY: scope.user_id}


def scope_params(scope: Scope) -> dict[str, Any]:
    """The values every scoped statement binds."""
    too_long = [
        name
        for name, value in (("org_id", scope.org_id), ("user_id", scope.user_id),
                            ("session_id", scope.session_id or ""))
        if len(value) > MAX_ID_LENGTH
    ]  # fmt: skip
    if too_long:
        raise ValueError(f"{', '.join(too_long)} must be at most {MAX_ID_LENGTH} characters")
    return {
        "org_id": scope.org_id,
        "user_id": scope.owner_id,
        "session_id": scope.session_id,
        "tenant_lexeme": sql.tenant_lexeme(scope.org_id, scope.owner_id),
    }


def aware(moment: datetime | None, field: str) -> datetime:
    """A timezone-aware moment (the application's clock by default); naive datetimes are
    ambiguous, so refused."""
    if moment is None:
        return clock.now()
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(f"{field} must be timezone-aware, got {moment.isoformat()}")
    return moment


def clean_text(text: str) -> str:
    """Surrounding whitespace is not part of a fact; nothing but whitespace is not a fact."""
    stripped = text.strip()
    if not stripped:
        raise ValueError("a fact needs some text")
    return stripped


class LongTermMemory:
    """Facts, profile and episodes of every tenant, over one pool.

    `embedder` is any LangChain `Embeddings` (None: lexical recall only); `judge` decides the
    contradictions the cheap rule cannot (None: such facts are kept side by side); `reranker`
    re-scores the fused head of a recall when the recipe's `rerank_limit` asks for it; its
    fact-side encodings are stored after each write commits (`persist_encodings`), so recall
    finds them encoded even in a fresh process. `near_duplicate` is the cosine from which a new
    fact may reinforce a stored one instead of being inserted (the words must agree too); by
    default the embedder's own measured value (`recollect.longterm.duplicates`).
    """

    def __init__(
        self,
        pool: ConnectionPool[Any],
        *,
        embedder: Embeddings | None = None,
        judge: ContradictionJudge | None = None,
        recipe: RecallRecipe | None = None,
        reranker: Reranker | None = None,
        profile_policy: ProfilePolicy | None = None,
        near_duplicate: float | None = None,
    ) -> None:
        if near_duplicate is not None and not 0 < near_duplicate <= 1:
            raise ValueError(f"near_duplicate must be in (0, 1], got {near_duplicate}")
        self.pool = pool
        self.profile_policy = profile_policy or ProfilePolicy.from_env()
        self.embedder = embedder
        self.near_duplicate = (
            near_duplicate if near_duplicate is not None else near_duplicate_similarity(embedder)
        )
        self.judge = judge
        self.recipe = recipe or RecallRecipe()
        self.reranker = reranker
        self._vector_types = VectorTypes()
        self._presence = DensePresence()
        self._sizes = ScopeSizes()

    def persist_encodings(self, scope: Scope) -> int:
        """Encode the scope owner's facts that have no stored reranker encoding yet, after
        their transaction committed (never inside it); how many. A failure costs only speed."""
        model = late_interaction_of(self.reranker)
        return 0 if model is None else persist_pending(self.pool, scope, model)

    # --- write path ----------------------------------------------------------------------

    def remember(self, scope: Scope, fact: NewFact) -> RememberResult:
        """Store one fact, unless it repeats (reinforce) or replaces (supersede) a known one."""
        scope_params(writable(scope))
        vector = embed_texts(self.embedder, [clean_text(fact.text)])[0]  # outside the lock
        with scoped(self.pool, scope) as conn:
            result = self.remember_in(conn, scope, fact, vector=vector)
        self.persist_encodings(scope)
        return result

    def remember_in(
        self,
        conn: Connection[Any],
        scope: Scope,
        fact: NewFact,
        *,
        vector: list[float] | None = None,
    ) -> RememberResult:
        """`remember` inside the caller's scoped transaction, so the fact commits (or rolls
        back) with whatever else that transaction writes. `vector`: already embedded text."""
        params = scope_params(writable(scope))
        text = clean_text(fact.text)
        learned_at = aware(fact.learned_at, "learned_at")
        if vector is None:
            vector = embed_texts(self.embedder, [text])[0]
        subject = normalise_subject(fact.subject) or infer_subject(text, fact.category)
        if subject is None and says_plan(text):
            subject = plan_subject(text)
        fact = fact.model_copy(update={"subject": subject, "metadata": signed(fact, scope)})
        replaces = [i for i in fact.replaces if _is_uuid(i)]
        conn.execute(sql.LOCK_USER, params)
        rows = self._neighbours(conn, scope, params, text, fact, vector, replaces)
        chosen = [r for r in rows if r["id"] in replaces]
        rows = [r for r in rows if r["id"] not in replaces]
        decision = decide(
            text,
            subject,
            [
                Neighbour(
                    r["id"],
                    r["text"],
                    normalise_subject(r["subject"]),
                    r["similarity"],
                    str(r["category"]),
                )
                for r in rows
            ],
            multi_valued=is_multi_valued(subject, fact.category),
            near_duplicate=self.near_duplicate,
            category=str(fact.category),
        )
        rows += chosen
        if decision.reinforce is not None:
            row = conn.execute(
                sql.REINFORCE[scope.kind],
                {
                    **params,
                    "id": decision.reinforce,
                    "gain": fact.confidence * REINFORCEMENT_GAIN,
                    "at": learned_at,
                    "source_ids": list(fact.source_ids),
                },
            ).fetchone()
            return RememberResult(
                action=RememberAction.REINFORCED, fact=StoredFact.model_validate(row)
            )
        if says_plan(text):  # kept beside what holds, unless it names the day it starts
            fact = fact.model_copy(update={"metadata": {**fact.metadata, PLAN_KEY: True}})
            start = None if decision.supersede else planned_start(text, learned_at)
            if start is not None:
                return self._plan(conn, scope, params, fact, text, learned_at, vector, rows, start)
        contradicted = list(dict.fromkeys([*decision.supersede, *(r["id"] for r in chosen)]))
        decided_by = "extractor" if chosen else "rule"
        if not contradicted and decision.ask and self.judge is not None:
            contradicted = [n.id for n in decision.ask if self.judge.contradicts(n.text, text)]
            decided_by = "rule" if isinstance(self.judge, RuleJudge) else "model"
        if contradicted and only_retracts(text):
            # "Forget that I have a cat": the old fact ends; the retraction is kept as the
            # record of that, never live as a fact of its own.
            fact = fact.model_copy(update={"metadata": {**fact.metadata, RETRACTION_KEY: True}})
        return self._insert(conn, scope, params, fact, text, learned_at, vector, rows,
                            contradicted, decided_by)  # fmt: skip

    def _plan(
        self,
        conn: Connection[Any],
        scope: Scope,
        params: dict[str, Any],
        fact: NewFact,
        text: str,
        learned_at: datetime,
        vector: list[float] | None,
        rows: list[dict[str, Any]],
        start: datetime,
    ) -> RememberResult:
        """A plan is stored starting on `start`, the day its words name, and the facts of its
        slot (and any the extractor said it replaces) hold until that day."""
        named = [str(i) for i in fact.replaces if _is_uuid(i) and any(r["id"] == i for r in rows)]
        held = list(
            dict.fromkeys([*named, *held_until_plan(text, fact.subject, fact.category, rows)])
        )
        result = self._insert(conn, scope, params, fact, text, learned_at, vector, rows, [],
                              "rule", valid_from=start)  # fmt: skip
        if held:
            conn.execute(
                sql.END_WHEN_PLAN_STARTS[scope.kind],
                {**params, "new_id": result.fact.id, "ids": held, "valid_to": start},
            )
        return result

    def _neighbours(
        self,
        conn: Connection[Any],
        scope: Scope,
        params: dict[str, Any],
        text: str,
        fact: NewFact,
        vector: list[float] | None,
        replaces: Sequence[str] = (),
    ) -> list[dict[str, Any]]:
        if vector is not None:  # sent binary and typed: a generic plan would parse a text
            self._vector_types.register(conn)  # literal again for every row it scores
        query = {
            **params,
            "now": clock.now(),
            "replaces": list(replaces),
            "subject": fact.subject,
            "text": text,
            "category": fact.category,
            "vector": Vector(vector) if vector is not None else None,
            "dim": len(vector) if vector is not None else None,
        }
        rows = list(conn.execute(sql.SAME_SUBJECT_OR_TEXT[scope.kind], query).fetchall())
        near = {**query, "limit": NEIGHBOURS, "dense_limit": NEIGHBOURS * sql.WRITE_SLACK}
        if vector is not None:
            dense = sql.NEAREST_DENSE if len(vector) <= COVERED_MAX_DIM else sql.NEAREST_DENSE_WIDE
            nearest = conn.execute(dense[scope.kind], near)
        else:
            nearest = conn.execute(sql.NEAREST_LEXICAL[scope.kind], {**near, "query": text})
        seen = {r["id"] for r in rows}
        rows += [r for r in nearest.fetchall() if r["id"] not in seen]
        return rows

    def _insert(
        self,
        conn: Connection[Any],
        scope: Scope,
        params: dict[str, Any],
        fact: NewFact,
        text: str,
        learned_at: datetime,
        vector: list[float] | None,
        rows: list[dict[str, Any]],
        contradicted: list[str],
        decided_by: str,
        *,
        valid_from: datetime | None = None,
    ) -> RememberResult:
        by_id = {r["id"]: r for r in rows}
        newer = sorted(
            (by_id[i] for i in contradicted if by_id[i]["learned_at"] > learned_at),
            key=lambda r: r["learned_at"],
        )
        stale_under = newer[0]["id"] if newer else None
        older = [i for i in contradicted if by_id[i]["learned_at"] <= learned_at]
        closed = bool(fact.metadata.get(RETRACTION_KEY)) and not newer
        row = conn.execute(
            sql.INSERT_FACT,
            {
                **params,
                "category": fact.category,
                "subject": fact.subject,
                "text": text,
                "confidence": fact.confidence,
                "source_ids": list(fact.source_ids),
                "learned_at": learned_at,
                "superseded_by": stale_under,
                "valid_from": valid_from,
                "valid_to": newer[0]["learned_at"] if newer else (learned_at if closed else None),
                "vector": literal(vector) if vector is not None else None,
                "metadata": Jsonb(fact.metadata),
            },
        ).fetchone()
        stored = StoredFact.model_validate(row)
        if vector is not None and _scope_size(rows) >= CENTRED_FROM:
            conn.execute(sql.CENTRE_CODES, {**params, "dim": len(vector)})
        if older:
            conn.execute(
                sql.SUPERSEDE[scope.kind],
                {**params, "new_id": stored.id, "ids": older, "valid_to": learned_at},
            )
        if stale_under is not None:
            action = RememberAction.INSERTED_STALE
        elif older:
            action = RememberAction.SUPERSEDED
        else:
            action = RememberAction.INSERTED
        return RememberResult(
            action=action,
            fact=stored,
            replaced=tuple(older),
            decided_by=decided_by if contradicted else "rule",
        )

    def ingest(
        self,
        scope: Scope,
        facts: Sequence[NewFact],
        embeddings: Sequence[Sequence[float] | None] | None = None,
    ) -> int:
        """Bulk import with COPY: no dedup or supersession, all rows or none.

        Pass `embeddings` when they are already computed (one per fact, None allowed);
        otherwise the store's embedder (if any) embeds the texts in batches.
        """
        params = scope_params(writable(scope))
        if embeddings is not None and len(embeddings) != len(facts):
            raise ValueError(f"got {len(embeddings)} embeddings for {len(facts)} facts")
        texts = [clean_text(f.text) for f in facts]
        if embeddings is None:
            vectors: list[Vector | None] = []
            for start in range(0, len(texts), 256):
                chunk = embed_texts(self.embedder, texts[start : start + 256])
                vectors += [Vector(v) if v is not None else None for v in chunk]
        else:
            vectors = [_as_vector(v) for v in embeddings]
        dims = {v.dimensions() for v in vectors if v is not None}
        if len(dims) > 1:
            raise ValueError(f"embeddings of one import must share a dimension, got {sorted(dims)}")
        rows = [
            (
                params["org_id"],
                params["user_id"],
                params["session_id"],
                str(fact.category),
                normalise_subject(fact.subject),
                text,
                fact.confidence,
                list(fact.source_ids),
                (at := aware(fact.learned_at, "learned_at")),
                at,
                vector,
                Jsonb(signed(fact, scope)),
            )
            for fact, text, vector in zip(facts, texts, vectors, strict=True)
        ]
        coded = {**params, "dim": next(iter(dims), None)}
        with scoped(self.pool, scope) as conn:
            self._vector_types.register(conn)
            conn.execute(sql.CREATE_INGEST_STAGING)
            with conn.cursor() as cur, cur.copy(sql.COPY_FACTS) as copy:
                copy.set_types(list(sql.COPY_FACT_TYPES))
                for row in rows:
                    copy.write_row(row)
            with conn.pipeline():  # one round trip; the lock first, so a centre is seen
                conn.execute(sql.LOCK_USER, params)
                if dims:
                    conn.execute(sql.CENTRE_CODES_BEFORE_IMPORT, coded)
                conn.execute(sql.MOVE_INGESTED_FACTS, coded)
        while self.persist_encodings(scope) == PENDING_LIMIT:
            pass  # a large import is encoded in chunks, each its own short transaction
        return len(rows)

    def forget(self, scope: Scope, fact_id: str) -> bool:
        """Soft-delete one live fact of this scope; False if there was none."""
        with scoped(self.pool, writable(scope)) as conn:
            cur = conn.execute(
                sql.FORGET[scope.kind], {**scope_params(scope), "id": fact_id, "now": clock.now()}
            )
            return cur.rowcount == 1

    def facts(self, scope: Scope, *, include_superseded: bool = False) -> list[StoredFact]:
        """What this scope can see, oldest first (deleted facts never)."""
        params = {
            **scope_params(scope),
            "include_superseded": include_superseded,
            "now": clock.now(),
        }
        with scoped(self.pool, scope) as conn:
            rows = conn.execute(sql.LIST_FACTS[scope.kind], params).fetchall()
        return [StoredFact.model_validate(r) for r in rows]

    def related(self, scope: Scope, text: str, *, limit: int = RELATED_LIMIT) -> list[StoredFact]:
        """The live facts a writer should see before deciding about `text`: those recall finds
        for it, then the most recently confirmed facts that have a subject."""
        scope_params(scope)
        # Every neighbour counts here, the profile's and the faintly similar ones included.
        everything = replace(self.recipe, min_similarity=NO_FLOOR)
        found = (
            [r.fact for r in self.recall(
                scope, text, k=limit, recipe=everything, repeat_profile=True
            ).facts]
            if text.strip()
            else []
        )  # fmt: skip
        with scoped(self.pool, scope) as conn:
            rows = conn.execute(
                sql.WITH_SUBJECT[scope.kind],
                {**scope_params(scope), "limit": limit, "now": clock.now()},
            ).fetchall()
        seen = {f.id for f in found}
        found += [f for f in map(StoredFact.model_validate, rows) if f.id not in seen]
        return found[:limit]

    def set_profile(self, scope: Scope, entries: Iterable[ProfileEntry]) -> None:
        """Set profile fields by hand (each entry replaces its field): recalled on every turn."""
        scope_params(personal(scope))
        updates = [
            ProfileUpdate(e.key, e.value.strip() or e.value, e.confidence, replace=True)
            for e in entries
        ]
        with scoped(self.pool, scope) as conn:
            self.update_profile_in(conn, scope, updates)

    def profile(self, scope: Scope, *, now: datetime | None = None) -> Profile:
        """The user's profile document (migrated to the current version if it is older) as it
        reads at `now` (the clock's by default): the plans whose day has come are in it."""
        params = {**scope_params(personal(scope)), "now": aware(now, "now")}
        with scoped(self.pool, scope) as conn:
            stored = read_profile(conn, scope)
            rows = conn.execute(sql.PLAN_DAYS[scope.kind], params).fetchall()
        changes = [StoredFact.model_validate(r) for r in rows]
        return profile_now(stored, changes, params["now"], self.profile_policy)

    def update_profile_in(
        self,
        conn: Connection[Any],
        scope: Scope,
        updates: Sequence[ProfileUpdate],
        *,
        forget_fact_ids: Iterable[str] = (),
    ) -> Profile:
        """Change profile fields inside the caller's transaction, losing no racing update."""
        return update_profile(
            conn, scope, updates, forget_fact_ids=forget_fact_ids, policy=self.profile_policy
        )

    def record_episode(self, scope: Scope, episode: NewEpisode) -> str:
        """Store an episode summary; returns its id."""
        scope_params(personal(scope))
        vector = self.embed_one(clean_text(episode.summary))
        with scoped(self.pool, scope) as conn:
            return self.record_episode_in(conn, scope, episode, vector=vector)

    def record_episode_in(
        self,
        conn: Connection[Any],
        scope: Scope,
        episode: NewEpisode,
        *,
        vector: list[float] | None = None,
    ) -> str:
        """`record_episode` inside the caller's scoped transaction."""
        params = scope_params(personal(scope))
        summary = clean_text(episode.summary)
        if vector is None:
            vector = self.embed_one(summary)
        row = conn.execute(
            sql.INSERT_EPISODE,
            {
                **params,
                "summary": summary,
                "occurred_at": aware(episode.occurred_at, "occurred_at"),
                "source_ids": list(episode.source_ids),
                "vector": literal(vector) if vector is not None else None,
                "metadata": Jsonb(episode.metadata),
            },
        ).fetchone()
        assert row is not None
        return str(row["id"])

    def embed_one(self, text: str) -> list[float] | None:
        """The stored-side embedding of `text`, or None without an embedder."""
        return embed_texts(self.embedder, [text])[0]

    # --- read path -----------------------------------------------------------------------

    def recall(
        self,
        scope: Scope,
        query: str,
        *,
        k: int | None = None,
        token_budget: int | None = None,
        now: datetime | None = None,
        query_embedding: Sequence[float] | None = None,
        recipe: RecallRecipe | None = None,
        as_of: datetime | None = None,
        repeat_profile: bool = False,
    ) -> Recollection:
        """The facts, profile and episodes that matter for `query`, best first, with scores.
        `as_of`: what was true at that moment instead ("where did I live before?"), the
        profile as it stood then included;
        `repeat_profile`: list facts the profile already shows too (a search, not a prompt)."""
        scope_params(scope)
        moment = aware(as_of, "as_of") if as_of is not None else None
        found = recall_scope(
            self.pool,
            scope,
            query,
            recipe=recipe or self.recipe,
            embedder=self.embedder,
            k=k,
            token_budget=token_budget,
            now=moment or aware(now, "now"),
            as_of=moment,
            query_embedding=checked(query_embedding) if query_embedding is not None else None,
            vector_types=self._vector_types,
            reranker=self.reranker,
            repeat_profile=repeat_profile,
            presence=self._presence,  # the query's embedding is most of a turn's CPU
            sizes=self._sizes,
        )
        if moment is None or scope.kind is ScopeKind.ORG:
            return found
        return found.model_copy(update={"profile": tuple(self.profile_at(scope, moment).entries())})

    def profile_at(self, scope: Scope, as_of: datetime) -> Profile:
        """The profile as it stood at `as_of` (`recollect.longterm.profile.profile_as_of`)."""
        params = {**scope_params(personal(scope)), "as_of": aware(as_of, "as_of")}
        with scoped(self.pool, scope) as conn:
            current = read_profile(conn, scope)
            rows = conn.execute(sql.LIST_FACTS_AS_OF[scope.kind], params).fetchall()
        facts = [StoredFact.model_validate(r) for r in rows]
        return profile_as_of(current, facts, params["as_of"], self.profile_policy)

    async def arecall(
        self,
        apool: AsyncConnectionPool[Any],
        scope: Scope,
        query: str,
        *,
        token_budget: int | None = None,
        now: datetime | None = None,
    ) -> Recollection:
        """`recall` for an event loop, as a turn on the served API asks it: the SQL is awaited
        on `apool` (the same database as `pool`), and the CPU work (embedding the query,
        reranking) runs on the bounded executor; a plan that embeds nothing and a finish with
        nothing to rank stay on the loop. Plan, the presence probe and finish are `recall`'s
        own."""
        scope_params(scope)
        planner = partial(
            plan_recall,
            scope,
            query,
            recipe=self.recipe,
            embedder=self.embedder,
            now=aware(now, "now"),
            token_budget=token_budget,
            vector_types=self._vector_types,
            reranker=self.reranker,
            presence=self._presence,
            sizes=self._sizes,
        )
        light = plans_lightly(scope, query, self.recipe, self.embedder, self._presence)
        plan = await offloaded_unless_light(light, planner)
        fetched = await afetch_from(apool, plan)
        if dense_found(plan, fetched, self._presence):
            plan = await offloaded(planner)
            fetched = await afetch_from(apool, plan)
        counted(plan, fetched, self._sizes)
        return await offloaded_unless_light(finishes_lightly(fetched), finish_recall, plan, fetched)


def _scope_size(neighbours: list[dict[str, Any]]) -> int:
    """The scope's size as the dense neighbour read counted it (0 when it read none)."""
    return max((int(r.get("scope_facts") or 0) for r in neighbours), default=0)


def _is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True


def _as_vector(value: Sequence[float] | None) -> Vector | None:
    if value is None:
        return None
    if isinstance(value, Vector):
        return value
    return Vector(checked(value))
