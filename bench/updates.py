"""Memory updates: after facts change, grow into lists or are retracted, is the right one found?

Each JSONL line is one sequence and its own user:
`{"id", "statements": [{"text", "category", "days_ago"}], "query", "current": [...],
"stale": [...], "as_of_days_ago": null}`; other keys may be present: a `kind` and a `lang`
label get their own scores, and `split` (`tune` or `held_out`) is what `--split` picks. The
statements go, in order, through the real write path (the engine's writer), each learned
`days_ago` before the run's fixed now; then the query is recalled (top 5), as of
`as_of_days_ago` when it is set.

`--judge` chooses who decides the contradictions the cheap rule leaves open, one system each:
`configured` (the default: the chat model when one is configured, else the offline rule),
`rule` (the offline rule judge), `model` (the configured chat model; it must exist) and
`oracle` (the labels answer: the pipeline's ceiling, given which candidates it asks about).

Scores per system, over sequences without `as_of_days_ago` (the `as_of` ones score apart):
- `current_hit_at_5`: share of sequences whose every `current` statement is in the top 5;
- `stale_leak_at_5`: share of sequences with any `stale` statement in the top 5;
- `as_of_hit_at_5`: the same as `current_hit_at_5`, for the `as_of` sequences (what was
  true then is `current`, what came later is `stale`), with `as_of_stale_leak_at_5`;
- `candidate_recall`: share of `stale` statements (outside `as_of`) the write path ever put
  before the judge or ended by its own rule: an update the judge never sees cannot happen.

Systems, in one run and one process, on the same embedder: `recollect` (the configured engine)
and `stock` (LangGraph's `PostgresStore`, `put` per statement and `search`; it keeps every
statement and has no notion of time).

    python -m bench.updates --data tests/data/updates.jsonl --json out.json
    python -m bench.updates --data tests/data/updates.jsonl --split held_out \
        --judge oracle,rule --json out.json
"""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
from langchain_core.embeddings import Embeddings

from recollect.extraction.fact_writer import EngineWriter
from recollect.longterm.configured import configured_judge, configured_memory
from recollect.longterm.records import FactCategory, NewFact
from recollect.longterm.rule_judge import RuleJudge
from recollect.longterm.supersession import ContradictionJudge, ModelJudge
from recollect.models.embeddings import embeddings_name, init_embeddings
from recollect.models.factory import describe_model
from recollect.store.migrations import migrate
from recollect.store.roles import app_uri
from recollect.store.scope import Scope
from recollect.store.server import CONNECTION_KWARGS, open_pool, resolve_uri, with_database
from recollect.store.tenancy import scoped

TOP = 5
NOW = datetime(2026, 6, 1, 12, tzinfo=UTC)
"""The run's fixed now: `days_ago` counts back from it, so results do not depend on the date."""
MAX_SEQUENCES = 10_000
MAX_STATEMENTS = 100
ORG = "updates"


class DataError(ValueError):
    """A line of the data file that cannot be used; the message names the line."""


@dataclass(frozen=True)
class Statement:
    text: str
    category: FactCategory
    days_ago: float


@dataclass(frozen=True)
class Case:
    id: str
    kind: str
    lang: str
    split: str
    statements: tuple[Statement, ...]
    query: str
    current: tuple[str, ...]
    stale: tuple[str, ...]
    as_of_days_ago: float | None

    @property
    def as_of(self) -> datetime | None:
        if self.as_of_days_ago is None:
            return None
        return NOW - timedelta(days=self.as_of_days_ago)


def _texts(value: object, name: str, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise DataError(f"{where}: {name!r} must be a list of non-empty strings")
    return tuple(v.strip() for v in value)


def parse_line(raw: str, where: str) -> Case:
    """One sequence, or a `DataError` naming what is wrong with it."""
    try:
        item = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise DataError(f"{where}: not JSON ({exc.msg})") from exc
    if not isinstance(item, dict):
        raise DataError(f"{where}: expected an object")
    missing = [k for k in ("id", "statements", "query", "current", "stale") if k not in item]
    if missing:
        raise DataError(f"{where}: missing {', '.join(missing)}")
    raw_statements = item["statements"]
    if not isinstance(raw_statements, list) or not 0 < len(raw_statements) <= MAX_STATEMENTS:
        raise DataError(f"{where}: 'statements' must be a list of 1 to {MAX_STATEMENTS}")
    statements = []
    for n, s in enumerate(raw_statements, start=1):
        if not isinstance(s, dict) or not isinstance(s.get("text"), str) or not s["text"].strip():
            raise DataError(f"{where}: statement {n} needs a non-empty 'text'")
        try:
            category = FactCategory(s.get("category"))
        except ValueError:
            known = ", ".join(c.value for c in FactCategory)
            raise DataError(
                f"{where}: statement {n} has category {s.get('category')!r} (known: {known})"
            ) from None
        days = s.get("days_ago", 0)
        if not isinstance(days, int | float) or isinstance(days, bool) or days < 0:
            raise DataError(f"{where}: statement {n}: 'days_ago' must be a number >= 0")
        statements.append(Statement(s["text"].strip(), category, float(days)))
    query = item["query"]
    if not isinstance(query, str) or not query.strip():
        raise DataError(f"{where}: 'query' must be a non-empty string")
    as_of = item.get("as_of_days_ago")
    if as_of is not None and (not isinstance(as_of, int | float) or as_of < 0):
        raise DataError(f"{where}: 'as_of_days_ago' must be null or a number >= 0")
    current = _texts(item["current"], "current", where)
    stale = _texts(item["stale"], "stale", where)
    said = {s.text for s in statements}
    unknown = [t for t in (*current, *stale) if t not in said]
    if unknown:
        raise DataError(f"{where}: {unknown[0]!r} is not one of the statements")
    return Case(
        id=str(item["id"]),
        kind=str(item.get("kind") or "all"),
        lang=str(item.get("lang") or "en"),
        split=str(item.get("split") or "tune"),
        statements=tuple(statements),
        query=query.strip(),
        current=current,
        stale=stale,
        as_of_days_ago=float(as_of) if as_of is not None else None,
    )


def load(path: Path) -> list[Case]:
    """Every sequence of the file; the first bad line stops the run before any work."""
    sequences = []
    with path.open(encoding="utf-8") as lines:
        for number, raw in enumerate(lines, start=1):
            if raw.strip():
                sequences.append(parse_line(raw, f"{path.name}:{number}"))
            if len(sequences) > MAX_SEQUENCES:
                raise DataError(f"{path.name}: more than {MAX_SEQUENCES} sequences")
    ids = [s.id for s in sequences]
    if len(set(ids)) != len(ids):
        raise DataError(f"{path.name}: sequence ids must be unique")
    if not sequences:
        raise DataError(f"{path.name}: no sequences")
    return sequences


Search = Callable[[Case], list[str]]
Placed = dict[str, set[str]]
"""Per sequence id, the statements the judge was asked about or the rule ended."""
JUDGES = ("configured", "rule", "model", "oracle")


class OracleJudge:
    """Answers as the labels do: an old statement ended when it is stale and the new one is
    its sequence's latest word (for `as_of`, when the new one is the later version)."""

    def __init__(self, sequences: Sequence[Case]) -> None:
        self.ended: set[tuple[str, str]] = set()
        for seq in sequences:
            if seq.as_of is not None:
                self.ended |= {(old, new) for old in seq.current for new in seq.stale}
            elif seq.stale:
                latest = min(seq.statements, key=lambda s: s.days_ago).text
                self.ended |= {(old, latest) for old in seq.stale}

    def contradicts(self, old: str, new: str) -> bool:
        return (old, new) in self.ended


class RecordingJudge:
    """Passes each question on, noting which old statements were asked about per sequence."""

    def __init__(self, judge: ContradictionJudge) -> None:
        self.judge = judge
        self.sequence = ""
        self.asked: Placed = defaultdict(set)

    def contradicts(self, old: str, new: str) -> bool:
        self.asked[self.sequence].add(old)
        return self.judge.contradicts(old, new)


class MemoEmbeddings(Embeddings):
    """The run's embedder, each text embedded once: the systems and judges of one run write
    the same statements, and the fillers recur across sequences."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self._documents: dict[str, list[float]] = {}
        self._queries: dict[str, list[float]] = {}

    def __getattr__(self, name: str) -> Any:  # measured thresholds of the inner embedder
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        missing = list(dict.fromkeys(t for t in texts if t not in self._documents))
        if missing:
            self._documents.update(zip(missing, self.inner.embed_documents(missing), strict=True))
        return [self._documents[t] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        if text not in self._queries:
            self._queries[text] = self.inner.embed_query(text)
        return self._queries[text]


def choose_judge(name: str, sequences: Sequence[Case]) -> ContradictionJudge | None:
    """The judge `--judge` names; `model` without a configured chat model is refused."""
    if name == "oracle":
        return OracleJudge(sequences)
    if name == "rule":
        return RuleJudge()
    judge = configured_judge()
    if name == "model" and not isinstance(judge, ModelJudge):
        raise DataError("--judge model needs a chat model (RECOLLECT_MODEL or OPENAI_BASE_URL)")
    return judge


def score(
    sequences: Sequence[Case], search: Search, placed: Placed | None = None
) -> dict[str, Any]:
    """The scores overall, per kind and per language, from the top `TOP` texts of each
    sequence; `placed` (when given) names the stale statements the judge saw or the rule
    ended, for `candidate_recall`."""
    rows: list[tuple[Case, bool, bool]] = []
    for seq in sequences:
        top = set(search(seq)[:TOP])
        rows.append((seq, all(t in top for t in seq.current), any(t in top for t in seq.stale)))

    def summary(picked: list[tuple[Case, bool, bool]]) -> dict[str, Any]:
        now = [(hit, leak) for seq, hit, leak in picked if seq.as_of is None]
        then = [(hit, leak) for seq, hit, leak in picked if seq.as_of is not None]
        out: dict[str, Any] = {"sequences": len(picked)}
        if now:
            out["current_hit_at_5"] = round(sum(h for h, _ in now) / len(now), 4)
            out["stale_leak_at_5"] = round(sum(leak for _, leak in now) / len(now), 4)
        if then:
            out["as_of_hit_at_5"] = round(sum(h for h, _ in then) / len(then), 4)
            out["as_of_stale_leak_at_5"] = round(sum(leak for _, leak in then) / len(then), 4)
        if placed is not None:
            stale = [(seq.id, t) for seq, _, _ in picked if seq.as_of is None for t in seq.stale]
            if stale:
                seen = sum(t in placed.get(sid, set()) for sid, t in stale)
                out["candidate_recall"] = round(seen / len(stale), 4)
        return out

    by_kind: dict[str, list[tuple[Case, bool, bool]]] = defaultdict(list)
    by_lang: dict[str, list[tuple[Case, bool, bool]]] = defaultdict(list)
    by_split: dict[str, list[tuple[Case, bool, bool]]] = defaultdict(list)
    for row in rows:
        by_kind[row[0].kind].append(row)
        by_lang[row[0].lang].append(row)
        by_split[row[0].split].append(row)
    result = summary(rows)
    result["by_kind"] = {kind: summary(picked) for kind, picked in sorted(by_kind.items())}
    result["by_lang"] = {lang: summary(picked) for lang, picked in sorted(by_lang.items())}
    result["by_split"] = {name: summary(picked) for name, picked in sorted(by_split.items())}
    result["misses"] = [seq.id for seq, hit, leak in rows if not hit or leak]
    return result


def run_recollect(
    pool: Any,
    sequences: Sequence[Case],
    run: str,
    judge: str = "configured",
    embedder: Embeddings | None = None,
) -> dict[str, Any]:
    """The configured engine with the chosen judge: each statement through the writer in its
    own transaction."""
    memory = configured_memory(pool)
    if embedder is not None:
        memory.embedder = embedder
    chosen = choose_judge(judge, sequences)
    recorder = RecordingJudge(chosen) if chosen is not None else None
    memory.judge = recorder
    writer = EngineWriter(memory)
    scopes = {seq.id: Scope.for_user(ORG, f"{run}-{judge}-{seq.id}") for seq in sequences}
    for seq in sequences:
        if recorder is not None:
            recorder.sequence = seq.id
        for statement in seq.statements:
            fact = NewFact(
                text=statement.text,
                category=statement.category,
                learned_at=NOW - timedelta(days=statement.days_ago),
            )
            with scoped(pool, scopes[seq.id]) as conn:
                writer.remember(conn, scopes[seq.id], fact)

    def search(seq: Case) -> list[str]:
        found = memory.recall(
            scopes[seq.id], seq.query, k=TOP, now=NOW, as_of=seq.as_of, repeat_profile=True
        )  # every matching fact, as the agent's search lists them (the prompt shows some once)
        return [r.fact.text for r in found.facts]

    placed: Placed = defaultdict(set)
    for seq in sequences:
        ended = memory.facts(scopes[seq.id], include_superseded=True)
        placed[seq.id] = {f.text for f in ended if f.superseded_by is not None}
        if recorder is not None:
            placed[seq.id] |= recorder.asked[seq.id]
    result = score(sequences, search, placed)
    result["judge"] = _judge_name(chosen)
    return result


def _judge_name(judge: ContradictionJudge | None) -> str:
    if judge is None or isinstance(judge, RuleJudge):
        return "rule"
    return type(judge).__name__


def run_stock(uri: str, sequences: Sequence[Case], embedder: Embeddings) -> dict[str, Any]:
    """LangGraph's `PostgresStore`: one `put` per statement, one `search` per query."""
    from langgraph.store.postgres import PostgresStore

    dims = len(embedder.embed_query("dimensions"))
    with psycopg.connect(uri, **CONNECTION_KWARGS) as conn:
        store = PostgresStore(conn, index={"dims": dims, "embed": embedder, "fields": ["text"]})
        store.setup()
        for seq in sequences:
            for n, statement in enumerate(seq.statements):
                store.put((ORG, seq.id), str(n), {"text": statement.text})

        def search(seq: Case) -> list[str]:
            items = store.search((ORG, seq.id), query=seq.query, limit=TOP)
            return [str(item.value["text"]) for item in items]

        return score(sequences, search)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="JSONL, one sequence a line")
    parser.add_argument("--json", type=Path, required=True, help="where to write results")
    parser.add_argument("--embeddings", default=None, help="offline | minilm | provider:model")
    parser.add_argument(
        "--judge",
        default="configured",
        help=f"comma-separated, one system each: {' | '.join(JUDGES)} (default: configured)",
    )
    parser.add_argument(
        "--split", default=None, help="only the sequences of this split (tune | held_out)"
    )
    args = parser.parse_args(argv)
    if not args.data.is_file():
        parser.error(f"--data {args.data} is not a file")
    judges = [j.strip() for j in args.judge.split(",") if j.strip()]
    unknown = [j for j in judges if j not in JUDGES]
    if not judges or unknown:
        parser.error(f"--judge must name some of {', '.join(JUDGES)}")
    try:
        sequences = load(args.data)
        if args.split is not None:
            sequences = [s for s in sequences if s.split == args.split]
            if not sequences:
                raise DataError(f"{args.data.name}: no sequences in split {args.split!r}")
        for judge in judges:
            choose_judge(judge, sequences)
    except DataError as exc:
        parser.error(str(exc))
    name = embeddings_name(args.embeddings)
    loaded = init_embeddings(name)
    if loaded is None:
        parser.error("the stock baseline searches by vector; choose an embedder")
    embedder = MemoEmbeddings(loaded)

    admin = resolve_uri(announce=False)
    dbname = f"bench_updates_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{dbname}"')
    uri = with_database(admin, dbname)
    try:
        systems = {"stock": run_stock(uri, sequences, embedder)}
        migrate(uri)
        pool = open_pool(app_uri(uri), max_size=2, name="bench-updates")
        try:
            run = uuid.uuid4().hex[:8]
            for judge in judges:
                name = "recollect" if judge == "configured" else f"recollect:{judge}"
                systems[name] = run_recollect(pool, sequences, run, judge, embedder)
        finally:
            pool.close()
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')

    report = {
        "data": args.data.name,
        "split": args.split or "all",
        "sequences": len(sequences),
        "embeddings": name,
        "model": describe_model(),
        "systems": systems,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    _print_table(report)
    return 0


def _print_table(report: dict[str, Any]) -> None:
    keys = ("current_hit_at_5", "stale_leak_at_5", "as_of_hit_at_5", "candidate_recall")
    print(f"{report['sequences']} sequences ({report['split']}); {report['model']}")
    print(f"{'system':<22}{'kind / lang':<24}" + "".join(f"{k:>18}" for k in keys))
    for system, result in report["systems"].items():
        groups = [("all", result), *result["by_kind"].items()]
        groups += [(f"lang={lang}", row) for lang, row in result.get("by_lang", {}).items()]
        groups += [(f"split={name}", row) for name, row in result.get("by_split", {}).items()]
        for kind, row in groups:
            cells = "".join(f"{row.get(k, float('nan')):>18.3f}" for k in keys)
            print(f"{system:<22}{kind:<24}{cells}")


if __name__ == "__main__":
    sys.exit(main())
