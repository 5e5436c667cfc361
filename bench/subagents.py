"""Sub-agents: how many tokens does one round of 8 workers cost, shared history vs scoped memory?

A LoCoMo conversation's dialogue, cut to about 20,000 tokens, is the shared history; its
observations (the facts extracted from that dialogue) are the user's long-term memory; eight of
its answerable questions are the eight subtasks. Per round:
- `naive`: every worker is sent the full history plus its subtask (the peer: full-context
  sharing, as a supervisor that forwards everything would);
- `recollect`: the orchestrator graph itself (offline model, so the count is deterministic):
  each worker starts from its own brief — blackboard, its notes, its own recall with its subtask
  as the query — within `Context.per_worker_tokens`, and hands back a capped result.
Reported: the tokens of every worker context summed (`*_tokens_per_round`), the orchestrator's
own context (its synthesis prompt), and whether each worker's handoff cites the question's
evidence (so small is not bought by sending nothing useful).

    python -m bench.subagents --json out.json [--data locomo_dev.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psycopg
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from bench.locomo import DEFAULT_DATA, load
from graphs.orchestrator import make_graph
from nodes.orchestrator.worker import WORKER_PROMPT
from recollect.delegation.brief import MEMORY_PREFIX
from recollect.history.window import message_tokens
from recollect.longterm.facts import LongTermMemory
from recollect.models.embeddings import embeddings_name, init_embeddings
from recollect.state.context import Context
from recollect.store.migrations import migrate
from recollect.store.roles import app_uri
from recollect.store.server import open_pool, resolve_uri, with_database

HISTORY_TOKENS = 20_000
WORKERS = 8
PER_WORKER_TOKENS = 1500


def shared_history(dialogue: dict[str, Any], max_tokens: int) -> list[BaseMessage]:
    """The conversation's turns, in order, as messages, until `max_tokens` is reached."""
    sessions = sorted(
        (int(k.removeprefix("session_")), v)
        for k, v in dialogue.items()
        if k.startswith("session_") and k.removeprefix("session_").isdigit()
    )
    speakers: list[str] = []
    messages: list[BaseMessage] = []
    for _, turns in sessions:
        for turn in turns:
            if turn["speaker"] not in speakers:
                speakers.append(turn["speaker"])
            text = f"{turn['speaker']}: {turn['text']}"
            kind = HumanMessage if turn["speaker"] == speakers[0] else AIMessage
            candidate = kind(content=text)
            if message_tokens([*messages, candidate]) > max_tokens:
                return messages
            messages.append(candidate)
    return messages


def naive_round(history: Sequence[BaseMessage], subtasks: Sequence[str]) -> list[int]:
    """Each worker's context when the whole history is forwarded to it."""
    return [
        message_tokens([SystemMessage(content=WORKER_PROMPT), *history, HumanMessage(content=t)])
        for t in subtasks
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None, help=f"default: {DEFAULT_DATA}")
    parser.add_argument("--json", type=Path, required=True, help="where to write results")
    parser.add_argument(
        "--conversation", type=int, default=3, help="which LoCoMo conversation (3: 22k tokens)"
    )
    parser.add_argument("--per-worker-tokens", type=int, default=PER_WORKER_TOKENS)
    parser.add_argument("--embeddings", default=None, help="offline | none | provider:model")
    args = parser.parse_args(argv)
    if args.data is None:
        args.data = Path(__file__).resolve().parents[1] / DEFAULT_DATA
        if not args.data.is_file():
            print(f"bench.subagents skipped: no LoCoMo data at {DEFAULT_DATA}; pass --data PATH")
            return 0
    if not args.data.is_file():
        parser.error(f"--data {args.data} is not a file")
    raw = json.loads(args.data.read_text())
    if not 0 <= args.conversation < len(raw):
        parser.error(f"--conversation must be in 0..{len(raw) - 1}")
    conv = load(args.data)[args.conversation]
    history = shared_history(raw[args.conversation]["conversation"], HISTORY_TOKENS)
    questions = conv.questions[:: max(len(conv.questions) // WORKERS, 1)][:WORKERS]
    subtasks = [q.text for q in questions]

    admin = resolve_uri(announce=False)
    dbname = f"bench_subagents_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{dbname}"')
    uri = with_database(admin, dbname)
    try:
        migrate(uri)
        pool = open_pool(app_uri(uri), max_size=WORKERS + 1, name="bench-subagents")
        try:
            memory = LongTermMemory(
                pool, embedder=init_embeddings(embeddings_name(args.embeddings))
            )
            memory.ingest(conv.scope, conv.new_facts())
            evidence_of = {
                f"{MEMORY_PREFIX}{stored.id}": set(stored.source_ids)
                for stored in memory.facts(conv.scope)
            }
            ctx = Context(
                user_id=conv.scope.user_id,
                org_id=conv.scope.org_id,
                model="offline",
                extraction=False,
                per_worker_tokens=args.per_worker_tokens,
                max_workers=WORKERS,
            )
            out = make_graph(memory=memory).invoke({"task": "\n".join(subtasks)}, context=ctx)
        finally:
            pool.close()
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')

    naive = naive_round(history, subtasks)
    workers = {r["task"]: r for r in out["results"]}
    scoped = [workers[t]["context_tokens"] for t in subtasks]
    cited = []
    for q in questions:
        sources = {s for f in workers[q.text]["facts"] for s in f["sources"]}
        found = set().union(*(evidence_of.get(s, set()) for s in sources))
        cited.append(bool(found & set(q.evidence)))
    report = {
        "data": args.data.name,
        "conversation": args.conversation,
        "workers": len(subtasks),
        "history_tokens": message_tokens(history),
        "history_messages": len(history),
        "memory_facts": len(conv.facts),
        "per_worker_tokens": args.per_worker_tokens,
        "naive_tokens_per_worker": naive,
        "recollect_tokens_per_worker": scoped,
        "naive_tokens_per_round": sum(naive),
        "recollect_tokens_per_round": sum(scoped),
        "recollect_share_of_naive": round(sum(scoped) / sum(naive), 4),
        "orchestrator_context_tokens": out["context_tokens"]["orchestrator"],
        "orchestrator_plan_tokens": out["context_tokens"]["orchestrator.plan"],
        "handoffs_citing_evidence": sum(cited),
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    print(f"{'':28}{'naive':>12}{'recollect':>12}")
    print(f"{'tokens per round':28}{sum(naive):>12,}{sum(scoped):>12,}")
    print(f"{'largest worker context':28}{max(naive):>12,}{max(scoped):>12,}")
    print(f"recollect / naive: {report['recollect_share_of_naive']:.1%}")
    print(f"orchestrator context: {report['orchestrator_context_tokens']:,} tokens")
    print(f"handoffs citing the question's evidence: {sum(cited)}/{len(cited)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
