"""Memory updates: after facts change, grow into lists or are retracted, is the right one found?

Each JSONL line is one sequence and its own user:
`{"id", "statements": [{"text", "category", "days_ago"}], "query", "current": [...],
"stale": [...], "as_of_days_ago": null}`; other keys may be present, and a `kind` label gets
its own scores. The statements go, in order, through the real write path (the engine's writer,
with the configured judge: the offline rule, or the chat model when one is configured), each
learned `days_ago` before the run's fixed now; then the query is recalled (top 5), as of
`as_of_days_ago` when it is set.

Scores per system, over sequences without `as_of_days_ago` (the `as_of` ones score apart):
- `current_hit_at_5`: share of sequences whose every `current` statement is in the top 5;
- `stale_leak_at_5`: share of sequences with any `stale` statement in the top 5;
- `as_of_hit_at_5`: the same as `current_hit_at_5`, for the `as_of` sequences (what was
  true then is `current`, what came later is `stale`), with `as_of_stale_leak_at_5`.

Systems, in one run and one process, on the same embedder: `recollect` (the configured engine)
and `stock` (LangGraph's `PostgresStore`, `put` per statement and `search`; it keeps every
statement and has no notion of time).

    python -m bench.updates --data tests/data/updates.jsonl --json out.json
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
from recollect.longterm.configured import configured_memory
from recollect.longterm.embeddings import embeddings_name, init_embeddings
from recollect.longterm.records import FactCategory, NewFact
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


def score(sequences: Sequence[Case], search: Search) -> dict[str, Any]:
    """The three scores overall and per kind, from the top `TOP` texts of each sequence."""
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
        return out

    by_kind: dict[str, list[tuple[Case, bool, bool]]] = defaultdict(list)
    for row in rows:
        by_kind[row[0].kind].append(row)
    result = summary(rows)
    result["by_kind"] = {kind: summary(picked) for kind, picked in sorted(by_kind.items())}
    result["misses"] = [seq.id for seq, hit, leak in rows if not hit or leak]
    return result


def run_recollect(pool: Any, sequences: Sequence[Case], run: str) -> dict[str, Any]:
    """The configured engine: each statement through the writer in its own transaction."""
    memory = configured_memory(pool)
    writer = EngineWriter(memory)
    scopes = {seq.id: Scope.for_user(ORG, f"{run}-{seq.id}") for seq in sequences}
    for seq in sequences:
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

    result = score(sequences, search)
    result["judge"] = type(memory.judge).__name__ if memory.judge is not None else "rule"
    return result


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
    args = parser.parse_args(argv)
    if not args.data.is_file():
        parser.error(f"--data {args.data} is not a file")
    try:
        sequences = load(args.data)
    except DataError as exc:
        parser.error(str(exc))
    name = embeddings_name(args.embeddings)
    embedder = init_embeddings(name)
    if embedder is None:
        parser.error("the stock baseline searches by vector; choose an embedder")

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
            systems["recollect"] = run_recollect(pool, sequences, uuid.uuid4().hex[:8])
        finally:
            pool.close()
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')

    report = {
        "data": args.data.name,
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
    keys = ("current_hit_at_5", "stale_leak_at_5", "as_of_hit_at_5")
    print(f"{report['sequences']} sequences; {report['model']}")
    print(f"{'system':<12}{'kind':<24}" + "".join(f"{k:>22}" for k in keys))
    for system, result in report["systems"].items():
        for kind, row in [("all", result), *result["by_kind"].items()]:
            cells = "".join(f"{row.get(k, float('nan')):>22.3f}" for k in keys)
            print(f"{system:<12}{kind:<24}{cells}")


if __name__ == "__main__":
    sys.exit(main())
