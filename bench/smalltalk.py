"""Small talk: does "thanks!", "ok cool" or "jajaja" still bring memories into the prompt?

One user's memory (a LoCoMo conversation's observations with `--data`, else a short built-in
persona; a card number, an SSN and a home address among the facts either way) is asked every
message of `bench/data/smalltalk/` through the template's `recall` node: the engine's recall,
and a store-backed recall (`RecollectStore` as `runtime.store`). A small-talk message that
brings back any fact or episode has injected; the profile comes back for every turn and does
not count. Reported by split (`tuning`: the languages the phrase list was tuned on;
`heldout`: languages and messages written before any tuning), language and style, with the
detector and with it switched off; beside it, the share of short content-bearing messages
that still recall something, and how many LoCoMo questions the detector alone calls small
talk (target 0).

    python -m bench.smalltalk --data ../shared/data/locomo/locomo_dev.json --json out.json
"""

from __future__ import annotations

import argparse
import json
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import psycopg
from langchain_core.embeddings import Embeddings
from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from bench.locomo import load as load_locomo
from recollect.basestore.store import RecollectStore
from recollect.longterm import recall as recall_module
from recollect.longterm.configured import configured_memory
from recollect.longterm.facts import LongTermMemory
from recollect.longterm.phatic import is_phatic
from recollect.longterm.records import FactCategory, NewFact, ProfileEntry
from recollect.models.embeddings import init_embeddings
from recollect.prebuilt.recall import RecallNode
from recollect.state.context import Context
from recollect.store.migrations import migrate
from recollect.store.roles import app_uri
from recollect.store.scope import Scope
from recollect.store.server import open_pool, resolve_uri, with_database

CORPUS = Path(__file__).resolve().parent / "data" / "smalltalk"
SPLITS = ("tuning", "heldout")
ORG, USER = "smalltalk", "reader"
NOW = datetime(2026, 6, 1, tzinfo=UTC)
SENSITIVE = (
    "My credit card number is 4111 1111 1111 1111, expiring 09/29.",
    "My social security number is 078-05-1120.",
    "I live at 14 Rosenweg, 0452 Oslo.",
)
PERSONA = (
    "Works as a nurse at the city hospital.",
    "Has a sister called Marta who lives in Lisbon.",
    "Dentist appointment on 12 June at 9:30.",
    "Order number 88-2213 for a new bicycle.",
    "Allergic to hazelnuts.",
    "Drives an old blue Volvo.",
    "Plays the cello in an amateur orchestra.",
    "Moved to Oslo last spring.",
)
"""The memory without LoCoMo data: enough for every content question of the corpus to have
a plausible answer."""


@dataclass(frozen=True)
class Message:
    text: str
    lang: str
    style: str
    phatic: bool
    split: str


def load_corpus(sample: int = 0) -> list[Message]:
    """Both splits; `sample` keeps the first N phatic and N content messages of each."""
    out: list[Message] = []
    for split in SPLITS:
        rows = [json.loads(line) for line in (CORPUS / f"{split}.jsonl").open(encoding="utf-8")]
        for phatic in (True, False):
            picked = [r for r in rows if r["phatic"] is phatic]
            out += [Message(**r, split=split) for r in picked[: sample or None]]
    return out


def detector_rows(messages: Sequence[Message]) -> dict[str, Any]:
    """The detector alone: small talk caught, content wrongly caught, by split and language."""
    out: dict[str, Any] = {}
    for split in SPLITS:
        mine = [m for m in messages if m.split == split]
        out[split] = {
            "phatic_caught": share(m for m in mine if m.phatic),
            "content_caught": share(m for m in mine if not m.phatic),
            "missed": [m.text for m in mine if m.phatic and not is_phatic(m.text)],
            "wrongly_caught": [m.text for m in mine if not m.phatic and is_phatic(m.text)],
        }
    return out


def share(messages: Iterator[Message] | Sequence[Message]) -> dict[str, float | int]:
    flags = [is_phatic(m.text) for m in messages]
    return {"n": len(flags), "share": round(sum(flags) / len(flags), 4) if flags else 0.0}


def locomo_questions_caught(path: Path | None) -> dict[str, int] | None:
    questions = _questions(path)
    if not questions:
        return None
    return {"questions": len(questions), "caught": sum(map(is_phatic, questions))}


def _questions(path: Path | None) -> list[str]:
    if path is None or not path.is_file():
        return []
    return [qa["question"] for s in json.loads(path.read_text()) for qa in s["qa"]]


def prototype_rows(
    messages: Sequence[Message], embedder: Embeddings, questions: Sequence[str]
) -> dict[str, Any]:
    """The alternative to a phrase list, measured: a message is small talk when its e5 vector
    comes within a threshold of a tuning small-talk message's (a prototype bank). The
    threshold is the lowest that takes no tuning content message (each message's own vector
    left out), then applied to the held-out split and to LoCoMo questions."""
    tuning = [m for m in messages if m.split == "tuning"]
    seen: dict[str, list[float]] = {}

    def vectors(texts: Sequence[str]) -> np.ndarray:
        for text in texts:
            if text not in seen:
                seen[text] = embedder.embed_query(text)
        return np.array([seen[t] for t in texts])

    bank = vectors([m.text for m in tuning if m.phatic])
    bank_ids = [i for i, m in enumerate(tuning) if m.phatic]

    def nearest(texts: Sequence[str], own: Sequence[int | None]) -> np.ndarray:
        cosines = vectors(texts) @ bank.T
        for row, index in enumerate(own):
            if index is not None and index in bank_ids:
                cosines[row, bank_ids.index(index)] = -1.0
        return np.asarray(cosines.max(axis=1))

    tuned = nearest([m.text for m in tuning], list(range(len(tuning))))
    phatic = np.array([m.phatic for m in tuning])
    threshold = float(tuned[~phatic].max()) + 1e-6
    held = [m for m in messages if m.split == "heldout"]
    held_near = nearest([m.text for m in held], [None] * len(held))
    held_phatic = np.array([m.phatic for m in held])
    asked = nearest(questions, [None] * len(questions)) if questions else np.array([])
    return {
        "threshold": round(threshold, 4),
        "tuning_phatic_caught": round(float((tuned[phatic] >= threshold).mean()), 4),
        "heldout_phatic_caught": round(float((held_near[held_phatic] >= threshold).mean()), 4),
        "heldout_content_caught": round(float((held_near[~held_phatic] >= threshold).mean()), 4),
        "locomo_questions_caught": int((asked >= threshold).sum()),
        "locomo_questions": len(questions),
    }


def user_facts(path: Path | None, conversation: int, max_facts: int) -> list[NewFact]:
    """The reader's memory: one LoCoMo conversation's observations, or the persona, plus the
    sensitive facts."""
    if path is not None and path.is_file():
        facts = load_locomo(path)[conversation].new_facts()
    else:
        facts = [NewFact(text=t, category=FactCategory.EVENT, confidence=1.0) for t in PERSONA]
    facts = facts[: max_facts or None]
    return facts + [
        NewFact(text=t, category=FactCategory.BIOGRAPHICAL, confidence=1.0) for t in SENSITIVE
    ]


Recaller = Callable[[str], int]
"""A message → how many facts and episodes it brought into the prompt."""


def node_recaller(memory: LongTermMemory, through_store: bool) -> Recaller:
    """The template's `recall` node over the engine, or over `RecollectStore` as its store."""
    node = RecallNode(None if through_store else memory)
    runtime = Runtime(
        context=Context(user_id=USER, org_id=ORG),
        store=RecollectStore(memory) if through_store else None,
    )

    def recalled(text: str) -> int:
        state: Any = {"messages": [HumanMessage(text)]}
        items = node(state, runtime)["recalled"]
        return sum(1 for item in items if item["kind"] != "profile")

    return recalled


@contextmanager
def detector_off() -> Iterator[None]:
    """Recall as it was before small talk was recognised: stop words only."""
    with mock.patch.object(recall_module, "is_phatic", return_value=False):
        yield


def recall_rows(messages: Sequence[Message], recaller: Recaller) -> dict[str, Any]:
    """Share of small talk that injected (by split, language, style) and of content that
    recalled something (by split)."""
    injected: dict[str, list[bool]] = defaultdict(list)
    recalled: dict[str, list[bool]] = defaultdict(list)
    leaks: list[str] = []
    for m in messages:
        found = recaller(m.text) > 0
        if m.phatic:
            for key in (m.split, f"{m.split}/{m.lang}", f"style/{m.style}", "all"):
                injected[key].append(found)
            if found:
                leaks.append(m.text)
        else:
            for key in (m.split, "all"):
                recalled[key].append(found)
    return {
        "phatic_injected": {k: _rate(v) for k, v in sorted(injected.items())},
        "content_recalled": {k: _rate(v) for k, v in sorted(recalled.items())},
        "phatic_that_injected": leaks,
    }


def _rate(flags: list[bool]) -> dict[str, float | int]:
    return {"n": len(flags), "share": round(sum(flags) / len(flags), 4)}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, required=True, help="where to write results")
    parser.add_argument("--data", type=Path, default=None, help="locomo_dev.json (else a persona)")
    parser.add_argument("--conversation", type=int, default=0, help="LoCoMo conversation (0-based)")
    parser.add_argument("--max-facts", type=int, default=0, help="only the first N facts")
    parser.add_argument("--sample", type=int, default=0, help="first N messages per split and kind")
    parser.add_argument("--no-baseline", action="store_true", help="skip the detector-off run")
    parser.add_argument(
        "--prototypes", type=int, default=-1,
        help="also measure an e5 prototype bank against N LoCoMo questions (0: none), then stop",
    )  # fmt: skip
    args = parser.parse_args(argv)

    messages = load_corpus(args.sample)
    report: dict[str, Any] = {
        "messages": len(messages),
        "languages": sorted({m.lang for m in messages}),
        "detector": detector_rows(messages),
        "locomo_questions": locomo_questions_caught(args.data),
    }
    if args.prototypes >= 0:
        embedder = init_embeddings("offline")
        assert embedder is not None
        asked = _questions(args.data)[: args.prototypes]
        report["prototypes"] = prototype_rows(messages, embedder, asked)
        args.json.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
        print(json.dumps(report["prototypes"], indent=2))
        return 0
    admin = resolve_uri(announce=False)
    dbname = f"bench_smalltalk_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{dbname}"')
    uri = with_database(admin, dbname)
    try:
        migrate(uri)
        with open_pool(app_uri(uri), max_size=2, name="bench-smalltalk") as pool:
            memory = configured_memory(pool)
            scope = Scope.for_user(ORG, USER)
            facts = user_facts(args.data, args.conversation, args.max_facts)
            memory.ingest(scope, facts)
            memory.set_profile(scope, [ProfileEntry(key="name", value="Reader")])
            report["facts"] = len(facts)
            report["recall"] = _recall_all(memory, messages, not args.no_baseline)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    _print(report)
    return 0


def _recall_all(
    memory: LongTermMemory, messages: Sequence[Message], baseline: bool
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for path, through_store in (("engine", False), ("store", True)):
        started = time.perf_counter()
        out[path] = recall_rows(messages, node_recaller(memory, through_store))
        out[path]["seconds"] = round(time.perf_counter() - started, 1)
        if baseline:
            with detector_off():
                out[f"{path}_detector_off"] = recall_rows(
                    messages, node_recaller(memory, through_store)
                )
    return out


def _print(report: dict[str, Any]) -> None:
    print(f"small talk: {report['messages']} messages, {len(report['languages'])} languages, "
          f"{report.get('facts', 0)} facts")  # fmt: skip
    for split, row in report["detector"].items():
        print(f"detector {split:8} small talk caught {row['phatic_caught']['share']:.3f} "
              f"(n={row['phatic_caught']['n']}), content caught "
              f"{row['content_caught']['share']:.3f} (n={row['content_caught']['n']})")  # fmt: skip
    if report["locomo_questions"]:
        q = report["locomo_questions"]
        print(f"LoCoMo questions called small talk: {q['caught']} of {q['questions']}")
    for path, rows in report.get("recall", {}).items():
        injected = _by_split(rows["phatic_injected"])
        recalled = _by_split(rows["content_recalled"])
        print(f"{path:20} small talk injected: {injected}; content recalled: {recalled}")


def _by_split(rates: dict[str, dict[str, float]]) -> str:
    return ", ".join(f"{s} {rates[s]['share']:.3f}" for s in SPLITS if s in rates)


if __name__ == "__main__":
    raise SystemExit(main())
