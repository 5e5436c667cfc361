"""The read path: candidates from SQL per the recipe, `ranking.rank`, then the token budget.

Dense candidates are an exact cosine scan of the scope's live vectors from a covering index (this
beat an ANN index in `bench/recall_latency.py`), or, for a user with more than
`fact_sql.EXACT_UP_TO` facts, a Hamming prefilter over binary codes with exact rescoring; lexical
candidates are the facts sharing any query word, tested in a covering index of their tsvectors
(`schema.covering_reads`). All statements of one recall, the transaction and its scope included,
go to the server in one pipeline; so does the check whether a dense search could find anything
(`presence`), until a scope is known to hold embedded memory. The scope's size, once the dense
statement has counted it, is kept for a while (`scope_sizes`); a large scope's lexical read runs
on a second connection beside the rest (`RecallPlan.fans_out`), and a scope read by its codes is
read in two ranges of ids, one on each connection (`RecallPlan.splits`).
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Sequence
from contextlib import AsyncExitStack, ExitStack
from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial
from typing import Any

from langchain_core.embeddings import Embeddings
from psycopg import AsyncConnection, Connection
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from recollect.longterm import fact_sql as sql
from recollect.longterm.about_user import asks_about_user
from recollect.longterm.duplicates import STOP_WORDS
from recollect.longterm.encodings import aload_missing, load_missing
from recollect.longterm.phatic import is_phatic
from recollect.longterm.presence import PRESENCE, DensePresence
from recollect.longterm.profile import Profile, from_row, profile_now
from recollect.longterm.ranking import Ranked, rank, rerank_head, reranks
from recollect.longterm.recipe import Candidate, Method, RecallRecipe
from recollect.longterm.records import (
    FactCategory,
    ProfileEntry,
    RecallCandidate,
    RecalledEpisode,
    RecalledFact,
    Recollection,
    StoredFact,
)
from recollect.longterm.rerankers import (
    LateInteractionReranker,
    Reranker,
    late_interaction_of,
    rerank_text,
)
from recollect.longterm.scope_sizes import ScopeSizes
from recollect.longterm.vectors import Vector, VectorTypes
from recollect.models.embeddings import capped_query
from recollect.store.schema.long_term import COVERED_MAX_DIM
from recollect.store.scope import Scope, ScopeKind
from recollect.store.spare_connections import aspare_connection, spare_connection
from recollect.store.tenancy import one_trip, pipelined_scope, scope_settings

log = logging.getLogger(__name__)

RELEVANCE_FLOOR_ATTRIBUTE = "relevance_floor"
FAN_OUT_FROM = 2_000
"""Unended facts from which a recall reads its lexical candidates on a second connection while
the dense ones are read on the first (`RecallPlan.fans_out`); below it, the second
transaction's round costs about what the overlap saves."""
_WORD = re.compile(r"\w+")
_TOKENS_PER_ITEM = 6
"""Bullet, date and separators around each recalled line."""


def approx_tokens(text: str) -> int:
    """The same chars/4 estimate as `count_tokens_approximately`, plus the line's framing."""
    return math.ceil(len(text) / 4) + _TOKENS_PER_ITEM


def query_vector(
    embedder: Embeddings | None, query: str, recipe: RecallRecipe
) -> list[float] | None:
    """The query's embedding, or None (lexical only) without an embedder or when it fails."""
    if embedder is None or Method.DENSE not in recipe.methods or not query.strip():
        return None
    try:
        return [float(x) for x in embedder.embed_query(query)]
    except Exception as exc:
        log.warning("query embedding failed (%s); recalling by full text only", exc)
        return None


@dataclass(frozen=True)
class RecallPlan:
    """What one recall asks the database for and how it ranks the answer: everything decided
    before any I/O, so the synchronous and asynchronous paths share it."""

    scope: Scope
    query: str
    recipe: RecallRecipe
    now: datetime
    limit: int
    token_budget: int | None
    params: dict[str, Any]
    dense: bool
    lexical: bool
    covered: bool
    historical: bool
    vector_types: VectorTypes
    floor: float | None
    late: LateInteractionReranker | None
    reranker: Reranker | None
    repeat_profile: bool
    about_user: bool = False
    """The query asks about the user: the relevance floor keeps its candidates."""
    probe: bool = False
    """The query is not embedded yet: the fetch also asks whether a dense search could find
    anything, and a yes means reading again with the query embedded (`dense_found`)."""
    size: int | None = None
    """How many unended facts of the query's width the scope held when this process last
    counted (`ScopeSizes`); None: the dense statement counts them."""
    split_id: str | None = None
    """The id that split the scope's facts when last counted whole: the dense read is then
    made in two ranges of ids (`fact_sql.DENSE_CODED_PARTS`)."""

    @property
    def splits(self) -> bool:
        """Whether the dense read is made in two ranges of ids."""
        return self.split_id is not None and not self.historical and self.covered

    @property
    def finds_split(self) -> bool:
        """Whether this recall counts the scope whole and finds the id that splits it: a
        scope read by its codes whose split this process does not know."""
        large = (self.size or 0) > sql.EXACT_UP_TO
        return self.dense and self.covered and not self.historical and large and not self.splits

    @property
    def fans_out(self) -> bool:
        """Whether a second connection reads beside the first: the lexical read of a large
        scope (both it and the dense read scan every unended fact, and on two connections they
        run at once), and the upper range of a split dense read."""
        large = (self.size or 0) >= FAN_OUT_FROM
        return self.dense and (self.splits or (self.lexical and large))


@dataclass(frozen=True)
class Fetched:
    """The candidates and profile document one recall read, before ranking."""

    facts: list[Candidate]
    episodes: list[Candidate]
    floored: list[tuple[str, Candidate]]
    fact_rows: dict[str, dict[str, Any]]
    document: Profile
    present: bool = False
    """The probe's answer (False when the plan did not probe)."""
    scope_facts: int | None = None
    """The count the dense statement made, when it made one (`fact_sql.DENSE_COUNTED`), or
    the whole count `fact_sql.SPLIT_POINT` made."""
    split_id: str | None = None
    """The id that splits the scope's facts, when `fact_sql.SPLIT_POINT` was read."""


def recall(
    pool: ConnectionPool[Any],
    scope: Scope,
    query: str,
    *,
    recipe: RecallRecipe,
    embedder: Embeddings | None,
    now: datetime,
    k: int | None = None,
    token_budget: int | None = None,
    query_embedding: Sequence[float] | None = None,
    vector_types: VectorTypes | None = None,
    reranker: Reranker | None = None,
    as_of: datetime | None = None,
    repeat_profile: bool = False,
    presence: DensePresence | None = None,
    sizes: ScopeSizes | None = None,
) -> Recollection:
    """Profile always, then the best facts and episodes within `k` and `token_budget`.

    A fact the kept profile already carries is not listed again (one fact is shown once in a
    prompt) unless `repeat_profile` asks for every match, as a search by the agent does.

    `as_of`: the facts that were true then (learned by then, not yet replaced), ranked as if
    it were then; the profile is today's. `presence`: embed the query only for a scope that a
    dense search could find something in (see `plan_recall`). `sizes`: the scope's size as
    last counted, which picks the dense statement and whether the lexical one runs beside it.
    """
    planner = partial(
        plan_recall,
        scope,
        query,
        recipe=recipe,
        embedder=embedder,
        now=now,
        k=k,
        token_budget=token_budget,
        query_embedding=query_embedding,
        vector_types=vector_types,
        reranker=reranker,
        as_of=as_of,
        repeat_profile=repeat_profile,
        presence=presence,
        sizes=sizes,
    )
    plan = planner()
    fetched = fetch_from(pool, plan)
    if dense_found(plan, fetched, presence):
        plan = planner()
        fetched = fetch_from(pool, plan)
    counted(plan, fetched, sizes)
    return finish(plan, fetched)


def fetch_from(pool: ConnectionPool[Any], plan: RecallPlan) -> Fetched:
    """`fetch` on a connection of `pool`, and a spare one beside it when the plan fans out."""
    with pool.connection() as conn, spare_connection(pool, plan.fans_out) as beside:
        return fetch(conn, plan, beside)


async def afetch_from(pool: AsyncConnectionPool[Any], plan: RecallPlan) -> Fetched:
    """`fetch_from` for an event loop."""
    async with pool.connection() as conn, aspare_connection(pool, plan.fans_out) as beside:
        return await afetch(conn, plan, beside)


def counted(plan: RecallPlan, fetched: Fetched, sizes: ScopeSizes | None) -> None:
    """Remember the scope's size when the dense statement counted it."""
    if sizes is not None and fetched.scope_facts is not None:
        dim = int(plan.params["dim"])
        sizes.counted(plan.scope, dim, fetched.scope_facts, fetched.split_id)


def dense_found(plan: RecallPlan, fetched: Fetched, presence: DensePresence | None) -> bool:
    """Whether a probing fetch found embedded memory: then the scope is remembered, and the
    recall plans (embedding the query) and reads again. Once per scope and process."""
    return plan.probe and presence is not None and presence.answered(plan.scope, fetched.present)


def probes(
    scope: Scope,
    query: str,
    recipe: RecallRecipe,
    embedder: Embeddings | None,
    query_embedding: Sequence[float] | None,
    presence: DensePresence | None,
) -> bool:
    """Whether a plan probes for embedded memory instead of embedding the query: a scope the
    process does not know to hold any, when the recipe searches by meaning."""
    return (
        presence is not None
        and embedder is not None
        and query_embedding is None
        and Method.DENSE in recipe.methods
        and bool(query.strip())
        and not presence.known(scope)
    )


def plans_lightly(
    scope: Scope,
    query: str,
    recipe: RecallRecipe,
    embedder: Embeddings | None,
    presence: DensePresence | None,
) -> bool:
    """Whether planning embeds nothing (no embedder, or a probe): then it is argument checks
    and a guess at the query's language (about 0.1 ms), cheaper on the caller's thread than a
    hop to an executor."""
    return embedder is None or probes(scope, capped_query(query), recipe, embedder, None, presence)


def finishes_lightly(fetched: Fetched) -> bool:
    """Whether finishing ranks nothing (no candidates, so no reranker runs): the profile alone
    is cheap enough for the caller's thread."""
    return not fetched.facts and not fetched.episodes


def plan_recall(
    scope: Scope,
    query: str,
    *,
    recipe: RecallRecipe,
    embedder: Embeddings | None,
    now: datetime,
    k: int | None = None,
    token_budget: int | None = None,
    query_embedding: Sequence[float] | None = None,
    vector_types: VectorTypes | None = None,
    reranker: Reranker | None = None,
    as_of: datetime | None = None,
    repeat_profile: bool = False,
    presence: DensePresence | None = None,
    sizes: ScopeSizes | None = None,
) -> RecallPlan:
    """Check the arguments, start the reranker's query encoding (it runs beside the query's
    embedding and the SQL), and embed the query.

    The query vector travels in pgvector's binary form: formatting and parsing 384 floats as
    text cost more than the whole dense scan of a 100-fact user.

    With `presence`, a scope not known to hold embedded memory is not embedded for: the plan
    probes instead (embedding is most of a served turn's CPU, and every new user has none).
    """
    query = capped_query(query)  # the embedder's window bounds the lexical and rerank sides too
    probe = probes(scope, query, recipe, embedder, query_embedding, presence)
    if probe:
        embedder = None
    limit = recipe.k if k is None else k
    if limit < 0:
        raise ValueError(f"k must not be negative, got {limit}")
    if token_budget is not None and token_budget < 0:
        raise ValueError(f"token_budget must not be negative, got {token_budget}")
    late = late_interaction_of(reranker) if reranks(query, reranker, recipe) else None
    searches_meaning = Method.DENSE in recipe.methods and (
        query_embedding is not None or embedder is not None
    )  # without an embedder (a user with no memory yet), there is nothing worth encoding for
    if late is not None and searches_meaning and has_content(query):
        late.begin(query)  # beside the query's embedding and the SQL
    vector = (
        list(query_embedding)
        if query_embedding is not None
        else query_vector(embedder, query, recipe)
    )
    params: dict[str, Any] = {
        "org_id": scope.org_id,
        "user_id": scope.owner_id,
        "session_id": scope.session_id,
        "tenant_lexeme": sql.tenant_lexeme(scope.org_id, scope.owner_id),
        "query": query,
        "dense_limit": recipe.dense_limit,
        "lexical_limit": recipe.lexical_limit,
        "as_of": as_of,
        "now": now,
    }
    dense = vector is not None and Method.DENSE in recipe.methods
    lexical = bool(query.strip()) and Method.LEXICAL in recipe.methods
    if dense and vector is not None:
        params |= {"vector": Vector(vector), "dim": len(vector)}
    covered = vector is not None and len(vector) <= COVERED_MAX_DIM
    size: int | None = None
    split_id: str | None = None
    if sizes is not None and vector is not None and dense and covered and as_of is None:
        size = sizes.known(scope, len(vector))
        split_id = sizes.split_id(scope, len(vector)) if (size or 0) > sql.EXACT_UP_TO else None
    return RecallPlan(
        scope=scope,
        query=query,
        recipe=recipe,
        now=now,
        limit=limit,
        token_budget=token_budget,
        params=params,
        dense=dense,
        lexical=lexical,
        covered=covered,
        historical=as_of is not None,
        vector_types=vector_types or VectorTypes(),
        floor=relevance_floor(recipe, embedder) if dense else None,
        late=late,
        reranker=reranker,
        repeat_profile=repeat_profile,
        about_user=asks_about_user(query),
        probe=probe,
        size=size,
        split_id=split_id,
    )


def fetch(
    conn: Connection[Any], plan: RecallPlan, beside: Connection[Any] | None = None
) -> Fetched:
    """The plan's reads on one connection (candidates, profile, the presence probe), all sent
    before any is read, then the stored reranker encodings of the head that this process
    lacks (a cold process only). With `beside`, the lexical read (and the upper range of a
    split dense read) goes there first and runs while the others do (`RecallPlan.fans_out`)."""
    if plan.dense:  # outside the pipeline: the first call looks it up
        for connection in (conn, beside) if beside is not None else (conn,):
            plan.vector_types.register(connection)
    own, aside = shares(plan, beside is not None)
    with ExitStack() as stack:
        cursors = {}
        if beside is not None and aside:
            stack.enter_context(pipelined_scope(beside, plan.scope))
            cursors = {n: beside.execute(q, a, prepare=p, binary=bool(p)) for n, q, a, p in aside}
        with pipelined_scope(conn, plan.scope):
            cursors |= {n: conn.execute(q, a, prepare=p, binary=bool(p)) for n, q, a, p in own}
    fetched = read_back(plan, {name: cursor.fetchall() for name, cursor in cursors.items()})
    texts = _unloaded_head(plan, fetched)
    if plan.late is not None and texts:  # read what the write path encoded
        with pipelined_scope(conn, plan.scope):
            load_missing(conn, plan.late, texts)
    return fetched


async def afetch(
    conn: AsyncConnection[Any], plan: RecallPlan, beside: AsyncConnection[Any] | None = None
) -> Fetched:
    """The async twin of `fetch`: BEGIN, the scope, the reads and COMMIT go out in one
    pipeline and come back together, one round trip (`tenancy.one_trip`)."""
    if plan.dense:
        for connection in (conn, beside) if beside is not None else (conn,):
            await plan.vector_types.aregister(connection)
    settings = scope_settings(plan.scope)
    own, aside = shares(plan, beside is not None)
    async with AsyncExitStack() as stack:
        cursors = {}
        if beside is not None and aside:
            await stack.enter_async_context(one_trip(beside, settings))
            for n, q, a, p in aside:
                cursors[n] = await beside.execute(q, a, prepare=p, binary=bool(p))
        async with one_trip(conn, settings):
            for n, q, a, p in own:
                cursors[n] = await conn.execute(q, a, prepare=p, binary=bool(p))
    fetched = read_back(plan, {name: await cursor.fetchall() for name, cursor in cursors.items()})
    texts = _unloaded_head(plan, fetched)
    if plan.late is not None and texts:
        async with one_trip(conn, settings):
            await aload_missing(conn, plan.late, texts)
    return fetched


Read = tuple[str, str, dict[str, Any] | None, bool | None]
"""A named statement of one recall, its parameters, and whether it is prepared; a prepared
read returns binary rows (timestamps, arrays and numbers cost less to load that way)."""


def reads(plan: RecallPlan) -> list[Read]:
    """The plan's statements: none waits for another's rows, so a pipeline sends them all at
    once. The candidate reads are prepared and run on generic plans (`sql.GENERIC_PLANS`)."""
    dense_sql, lexical_sql = _candidate_statements(plan)
    statements: list[Read] = [
        ("plans", sql.GENERIC_PLANS, None, None),
        ("profile", sql.PROFILE_READ, plan.params, True),
        ("plan_days", sql.PLAN_DAYS[plan.scope.kind], plan.params, True),
    ]
    if plan.probe:
        statements.append(("presence", PRESENCE[plan.scope.kind], plan.params, None))
    if dense_sql and plan.splits:
        lower, upper = sql.DENSE_CODED_PARTS[plan.scope.kind]
        split = plan.params | {"split_id": plan.split_id}
        below = round((plan.size or 0) * sql.LOWER_SHARE)
        statements.append(("dense", lower, split | {"scope_size": below}, True))
        above = (plan.size or 0) - below
        statements.append(("dense_upper", upper, split | {"scope_size": above}, True))
    elif dense_sql:  # the codes' cut (`fact_sql.DENSE_CODED`) is set by the scope's size
        statements.append(("dense", dense_sql, plan.params | {"scope_size": plan.size}, True))
    if plan.finds_split:
        statements.append(("split", sql.SPLIT_POINT[plan.scope.kind], plan.params, True))
    if lexical_sql:
        statements.append(("lexical", lexical_sql, plan.params, True))
    return statements


def shares(plan: RecallPlan, two: bool) -> tuple[list[Read], list[Read]]:
    """`reads` for the first connection and for the one beside it: with two, a plan that
    fans out sends its lexical read, the upper range of its dense read and the search for the
    point that splits the scope (each on its generic plan) to the second."""
    statements = reads(plan)
    if not (two and plan.fans_out):
        return statements, []
    beside = {"lexical", "dense_upper", "split"}
    own = [r for r in statements if r[0] not in beside]
    aside: list[Read] = [("plans_beside", sql.GENERIC_PLANS, None, None)]
    aside += [r for r in statements if r[0] in beside]
    return own, aside


def read_back(plan: RecallPlan, rows: dict[str, list[dict[str, Any]]]) -> Fetched:
    """The rows of `reads` as candidates, profile and the probe's answer."""
    profile = rows["profile"]
    presence = rows.get("presence")
    changes = [StoredFact.model_validate(r) for r in rows["plan_days"]]
    dense = _ranges_joined(rows.get("dense", []), rows.get("dense_upper"), plan.recipe.dense_limit)
    split = rows.get("split")
    return replace(
        gathered(
            plan,
            _by_kind_and_method(dense, rows.get("lexical", [])),
            profile_now(from_row(profile[0] if profile else None), changes, plan.now),
            bool(presence and presence[0]["found"]),
        ),
        scope_facts=split[0]["scope_facts"] if split else _counted_by(dense),
        split_id=split[0]["split_id"] if split else None,
    )


def _counted_by(dense: list[dict[str, Any]]) -> int | None:
    return next((r["scope_facts"] for r in dense if r["scope_facts"] is not None), None)


def _ranges_joined(
    lower: list[dict[str, Any]], upper: list[dict[str, Any]] | None, limit: int
) -> list[dict[str, Any]]:
    """The dense rows of both ranges of a split read: the best `limit` facts of the two, as
    the whole read would have kept (each range kept its own best `limit`)."""
    if upper is None:
        return lower
    facts = sorted(
        (r for r in lower + upper if r["kind"] == "fact"), key=lambda r: -float(r["similarity"])
    )
    return facts[:limit] + [r for r in lower if r["kind"] != "fact"]


def _unloaded_head(plan: RecallPlan, fetched: Fetched) -> dict[str, str]:
    """The head's texts by id when the late-interaction cache lacks any of them, else none."""
    if plan.late is None:
        return {}
    texts = head_texts(plan, fetched)
    return texts if plan.late.missing(list(texts.values())) else {}


def gathered(
    plan: RecallPlan,
    results: dict[tuple[str, Method], list[dict[str, Any]]],
    document: Profile,
    present: bool = False,
) -> Fetched:
    """Candidates from the fetched rows, all set aside when the relevance floor says the query
    is off topic (never a question about the user)."""
    fact_rows: dict[str, dict[str, Any]] = {}
    facts = _candidates(
        results[("fact", Method.DENSE)], results[("fact", Method.LEXICAL)], fact_rows
    )
    episodes = _candidates(
        results[("episode", Method.DENSE)], results[("episode", Method.LEXICAL)], {}
    )
    floor = None if plan.about_user else plan.floor
    if has_content(plan.query) and _above(floor, facts + episodes):
        return Fetched(facts, episodes, [], fact_rows, document, present)
    floored = [("fact", c) for c in facts] + [("episode", c) for c in episodes]
    return Fetched([], [], floored, fact_rows, document, present)


def head_texts(plan: RecallPlan, fetched: Fetched) -> dict[str, str]:
    """Id → text as reranked, for the fact head the reranker will score."""
    return {
        c.id: rerank_text(c.text, c.learned_at) for c in rerank_head(fetched.facts, plan.recipe)
    }


def finish(plan: RecallPlan, fetched: Fetched) -> Recollection:
    """Rank, keep the profile and what fits `k` and the token budget, and say why the rest
    stayed out."""
    query, recipe, now, reranker = plan.query, plan.recipe, plan.now, plan.reranker
    facts, episodes, floored = fetched.facts, fetched.episodes, fetched.floored
    fact_rows, document = fetched.fact_rows, fetched.document
    limit, token_budget, repeat_profile = plan.limit, plan.token_budget, plan.repeat_profile
    profile = document.entries()
    ranked = sorted(
        [("fact", r) for r in rank(query, facts, recipe, now, reranker)]
        + [("episode", r) for r in rank(query, episodes, recipe, now, reranker)],
        key=lambda item: -item[1].score,
    )

    budget = token_budget if token_budget is not None else math.inf
    used = 0
    kept_profile: list[ProfileEntry] = []
    for entry in profile:
        cost = approx_tokens(f"{entry.key}: {entry.value}")
        if used + cost > budget:
            break
        kept_profile.append(entry)
        used += cost
    shown = set() if repeat_profile else _shown_in_profile(document, {e.key for e in kept_profile})
    chosen_facts: list[RecalledFact] = []
    chosen_episodes: list[RecalledEpisode] = []
    dropped: dict[str, str] = {}
    for kind, r in ranked:
        if len(chosen_facts) + len(chosen_episodes) >= limit:
            dropped[r.id] = "limit"
            continue
        if kind == "fact" and (r.candidate.id in shown or _norm(r.candidate.text) in shown):
            dropped[r.id] = "duplicate"
            continue  # the profile already says it: one fact is shown once
        cost = approx_tokens(r.candidate.text)
        if used + cost > budget:
            dropped[r.id] = "budget"
            continue  # a shorter item further down may still fit
        used += cost
        c = r.candidate
        if kind == "fact":
            chosen_facts.append(
                RecalledFact(
                    fact=StoredFact.model_validate(shown_row(fact_rows[c.id])),
                    score=r.score,
                    similarity=c.similarity,
                    lexical=c.lexical_score,
                    fused=r.fused,
                    rerank=r.rerank_score,
                    recency=r.recency,
                )
            )
        else:
            chosen_episodes.append(
                RecalledEpisode(
                    id=c.id,
                    summary=c.text,
                    occurred_at=c.learned_at,
                    score=r.score,
                    similarity=c.similarity,
                    lexical=c.lexical_score,
                    recency=r.recency,
                )
            )
    found = Recollection(
        profile=tuple(kept_profile),
        facts=tuple(chosen_facts),
        episodes=tuple(chosen_episodes),
        tokens=used,
    )
    return found.weighed_by(partial(_weigh_all, ranked, dropped, floored))


def _weigh_all(
    ranked: Sequence[tuple[str, Ranked]],
    dropped: dict[str, str],
    floored: Sequence[tuple[str, Candidate]],
) -> tuple[RecallCandidate, ...]:
    """Every candidate as a trace shows it: the ranked ones best first, then the floored."""
    return tuple(_explained(kind, r, dropped.get(r.id)) for kind, r in ranked) + tuple(
        _below_floor(kind, c) for kind, c in floored
    )


def shown_row(row: dict[str, Any]) -> dict[str, Any]:
    """A candidate's row as a fact is built from: its metadata parsed from the JSON text the
    candidate statements return (see `fact_sql.CANDIDATE_COLUMNS`)."""
    metadata = row["metadata"]
    return {**row, "metadata": json.loads(metadata) if isinstance(metadata, str) else metadata}


def _explained(kind: str, r: Ranked, dropped: str | None) -> RecallCandidate:
    """One ranked candidate as a trace shows it."""
    return _weighed(kind, r.candidate, dropped, r.rerank_score, r.recency, r.score)


def _below_floor(kind: str, c: Candidate) -> RecallCandidate:
    """A candidate of a query the relevance floor judged off topic: weighed, never ranked."""
    return _weighed(kind, c, "floor")


def _weighed(
    kind: str,
    c: Candidate,
    dropped: str | None,
    rerank: float | None = None,
    recency: float = 1.0,
    score: float = 0.0,
) -> RecallCandidate:
    """Built without validation: every value comes typed from the ranking, and a recall weighs
    about a hundred candidates."""
    return RecallCandidate.model_construct(
        id=c.id,
        kind=kind,
        text=c.text,
        dense_rank=c.dense_rank,
        lexical_rank=c.lexical_rank,
        rerank=rerank,
        recency=recency,
        confidence=c.confidence,
        score=score,
        kept=dropped is None,
        dropped=dropped,
    )


def relevance_floor(recipe: RecallRecipe, embedder: Embeddings | None) -> float | None:
    """The cosine below which a dense-only candidate is noise: the recipe's, else the
    embedder's own measured value (`relevance_floor` attribute), else none."""
    if recipe.min_similarity is not None:
        return recipe.min_similarity
    value = getattr(embedder, RELEVANCE_FLOOR_ATTRIBUTE, None)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def has_content(query: str) -> bool:
    """Whether the query has a word beyond English function words ("is it", "and then what"
    ask nothing a memory could answer) and is more than small talk ("thanks!", "ok cool",
    "jajaja", "ありがとう": `phatic`); an empty query has none. Without content a recall
    brings back the profile alone."""
    words = _WORD.findall(query.lower())
    return any(word not in STOP_WORDS for word in words) and not is_phatic(query)


def _above(floor: float | None, candidates: list[Candidate]) -> list[Candidate]:
    """All candidates when one of them shares a word with the query or comes within the floor
    in meaning; none otherwise: a stop-word-only or unrelated query brings back nothing
    instead of the nearest noise. Decided per query, not per fact, because a right answer
    may share no word and sit below the floor ("Where does the user live?" / "Moved to
    Berlin") while the question as a whole is plainly on topic."""
    if floor is None:
        return candidates
    on_topic = any(
        c.lexical_rank is not None or (c.similarity is not None and c.similarity >= floor)
        for c in candidates
    )
    return candidates if on_topic else []


def _norm(text: str) -> str:
    return " ".join(text.lower().split()).rstrip(".")


def _shown_in_profile(profile: Profile, keys: set[str]) -> set[str]:
    """Fact ids and texts that the kept profile fields already carry."""
    shown: set[str] = set()
    for key in keys:
        for value in profile.fields.get(key, []):
            if value.get("fact_id"):
                shown.add(str(value["fact_id"]))
            shown.add(_norm(str(value.get("value", ""))))
    return shown


def _candidates(
    dense_rows: Sequence[dict[str, Any]],
    lexical_rows: Sequence[dict[str, Any]],
    rows_by_id: dict[str, dict[str, Any]],
) -> list[Candidate]:
    """One `Candidate` per id, carrying the rank and raw score from each list it appeared in."""
    dense = {r["id"]: (i, r) for i, r in enumerate(dense_rows, start=1)}
    lexical = {r["id"]: (i, r) for i, r in enumerate(lexical_rows, start=1)}
    out: list[Candidate] = []
    for fact_id in dict.fromkeys([*dense, *lexical]):
        d = dense.get(fact_id)
        lx = lexical.get(fact_id)
        row = (d or lx)[1]  # type: ignore[index]
        rows_by_id[fact_id] = row
        out.append(
            Candidate(
                id=fact_id,
                text=row["text"],
                category=FactCategory(row["category"]),
                confidence=float(row["confidence"]),
                learned_at=row["learned_at"],
                last_reinforced_at=row["last_reinforced_at"],
                dense_rank=d[0] if d else None,
                similarity=float(d[1]["similarity"]) if d else None,
                lexical_rank=lx[0] if lx else None,
                lexical_score=float(lx[1]["lexical_score"]) if lx else None,
            )
        )
    return out


def _candidate_statements(plan: RecallPlan) -> tuple[str | None, str | None]:
    """Which dense and lexical statements a recall runs (None: that half is off)."""
    kind = plan.scope.kind
    if plan.historical:
        dense_sql, lexical_sql = sql.DENSE_AS_OF[kind], sql.LEXICAL_AS_OF[kind]
    else:
        dense_sql, lexical_sql = _nearest_statement(plan)[kind], sql.LEXICAL[kind]
    return (dense_sql if plan.dense else None, lexical_sql if plan.lexical else None)


def _nearest_statement(plan: RecallPlan) -> dict[ScopeKind, str]:
    if not plan.covered:
        return sql.DENSE_WIDE
    if plan.size is None:
        return sql.DENSE_COUNTED
    return sql.DENSE_EXACT if plan.size <= sql.EXACT_UP_TO else sql.DENSE_CODED


def _by_kind_and_method(
    dense_rows: list[dict[str, Any]], lexical_rows: list[dict[str, Any]]
) -> dict[tuple[str, Method], list[dict[str, Any]]]:
    """Each method's rows split into facts and episodes, best first."""
    results: dict[tuple[str, Method], list[dict[str, Any]]] = {}
    for method, rows, score in (
        (Method.DENSE, dense_rows, "similarity"),
        (Method.LEXICAL, lexical_rows, "lexical_score"),
    ):
        for kind in ("fact", "episode"):
            picked = [r for r in rows if r["kind"] == kind]
            picked.sort(key=lambda r: -float(r[score]))  # a UNION does not promise its order
            results[(kind, method)] = picked
    return results
