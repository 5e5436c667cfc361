"""How well, and how fast, does the write path's gate judge a fact? The screening corpus
(`tests/data/screening/`, tuning and held-out parts) through `FactScreen.check`, one fact at a
time: PII recall per kind and language, secrets refused per class and language, injection
recall per language and obfuscation style, split instructions caught per language (a batch of
two), benign false alarms per class and as neighbours, and latency per fact with the learned layer
(median, p95, p99 over every corpus item, repeated): one fact at a time, in batches of one
extraction's size, and the write path's whole cost (screening plus the store's embedding).

The peer is the same rules reading only the canonical text (no skeleton, no decoded payloads):
what the normalisation views buy, and what they cost.

    python -m bench.screen --json bench/out/screen.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from recollect.extraction.validation import FactScreen, Verdict, normalise
from recollect.gate.injection_classifier import SWITCH_ENV
from recollect.gate.injection_patterns import RULES
from recollect.gate.normalise import canonical
from recollect.gate.pii_decoding import decode
from recollect.gate.redaction import redact
from recollect.gate.screening import clear_caches
from recollect.gate.secrets import find_secrets
from recollect.models.embeddings import OFFLINE, init_embeddings
from tests.support.screening_corpus import (
    BENIGN,
    INJECTIONS,
    PII,
    SECRETS,
    SPLITS,
    Case,
    kept_unchanged,
    leaked,
)


def _canonical_only(text: str) -> tuple[str, ...]:
    seen = canonical(text)
    return tuple(dict.fromkeys(f"injection: {name}" for name, rule in RULES if rule.search(seen)))


@contextmanager
def _peer() -> Iterator[None]:
    """The rules on the canonical text alone (no learned layer), swapped in for the duration."""
    import recollect.extraction.validation as validation

    original = validation.ruled_injection
    validation.ruled_injection = _canonical_only
    switch = os.environ.get(SWITCH_ENV)
    os.environ[SWITCH_ENV] = "off"
    try:
        yield
    finally:
        validation.ruled_injection = original
        if switch is None:
            del os.environ[SWITCH_ENV]
        else:
            os.environ[SWITCH_ENV] = switch


BATCH = 5
"""Facts screened together in the batch timings: what the extraction of one turn yields."""


def _rate(hits: int, total: int) -> float:
    return round(hits / total, 4) if total else 1.0


def quality(
    check: Callable[[str], Verdict], splits: tuple[str | None, ...] = ("tune", "holdout", None)
) -> dict[str, Any]:
    """Recall per class and false alarms, for each split and overall (None)."""
    out: dict[str, Any] = {}
    for split in splits:
        pii: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        pii_by_lang: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for case in _of(PII, split):
            caught = not leaked(case, check(case.text).text)
            for table, key in ((pii, case.kind), (pii_by_lang, case.lang)):
                table[key][1] += 1
                table[key][0] += caught
        secrets_by: dict[str, dict[str, list[int]]] = {
            "class": defaultdict(lambda: [0, 0]),
            "lang": defaultdict(lambda: [0, 0]),
        }
        for case in _of(SECRETS, split):
            verdict = check(case.text)
            refused = not verdict.accepted and not leaked(case, verdict.text)
            for axis, key in (("class", f"{case.kind}:{case.style}"), ("lang", case.lang)):
                secrets_by[axis][key][1] += 1
                secrets_by[axis][key][0] += refused
        splits: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        pairs_refused = pairs = 0
        for pair in SPLITS:
            if split not in (None, pair.split):
                continue
            verdicts = FactScreen().check_batch([(pair.first, None), (pair.second, None)])
            if pair.injection:
                splits[pair.lang][1] += 1
                splits[pair.lang][0] += not any(v.accepted for v in verdicts)
            else:
                pairs += 1
                pairs_refused += not all(v.accepted for v in verdicts)
        neighbours = [case.text for case in _of(BENIGN, split)]
        for earlier, later in itertools.pairwise(neighbours):
            pairs += 1
            verdicts = FactScreen().check_batch([(earlier, None), (later, None)])
            pairs_refused += not all(v.accepted for v in verdicts)
        injections_by: dict[str, dict[str, list[int]]] = {
            "lang": defaultdict(lambda: [0, 0]),
            "style": defaultdict(lambda: [0, 0]),
        }
        for case in _of(INJECTIONS, split):
            caught = not check(case.text).accepted
            for axis, key in (("lang", case.lang), ("style", case.style)):
                injections_by[axis][key][1] += 1
                injections_by[axis][key][0] += caught
        benign: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for case in _of(BENIGN, split):
            verdict = check(case.text)
            benign[case.kind][1] += 1
            benign[case.kind][0] += not kept_unchanged(case, verdict.accepted, verdict.text)
        pii_total = sum(t for _, t in pii.values())
        inj = injections_by["style"]
        inj_total = sum(t for _, t in inj.values())
        benign_total = sum(t for _, t in benign.values())
        flagged_benign = sum(h for h, _ in benign.values())
        out[split or "all"] = {
            "pii_cases": pii_total,
            "pii_recall": _rate(sum(h for h, _ in pii.values()), pii_total),
            "pii_recall_by_kind": {k: _rate(h, t) for k, (h, t) in sorted(pii.items())},
            "pii_recall_by_lang": {k: _rate(h, t) for k, (h, t) in sorted(pii_by_lang.items())},
            "pii_stored": sum(t - h for h, t in pii.values()),
            "secret_cases": sum(t for _, t in secrets_by["class"].values()),
            "secrets_stored": sum(t - h for h, t in secrets_by["class"].values()),
            "secret_refusal_by_class": {
                k: _rate(h, t) for k, (h, t) in sorted(secrets_by["class"].items())
            },
            "secret_refusal_by_lang": {
                k: _rate(h, t) for k, (h, t) in sorted(secrets_by["lang"].items())
            },
            "split_injections": sum(t for _, t in splits.values()),
            "split_both_halves_refused_by_lang": {
                k: _rate(h, t) for k, (h, t) in sorted(splits.items())
            },
            "benign_neighbour_pairs": pairs,
            "benign_neighbour_false_alarm_rate": _rate(pairs_refused, pairs),
            "injection_cases": inj_total,
            "injection_recall": _rate(sum(h for h, _ in inj.values()), inj_total),
            "injection_recall_by_lang": {
                k: _rate(h, t) for k, (h, t) in sorted(injections_by["lang"].items())
            },
            "injection_recall_by_style": {k: _rate(h, t) for k, (h, t) in sorted(inj.items())},
            "injection_precision": _rate(
                sum(h for h, _ in inj.values()), sum(h for h, _ in inj.values()) + flagged_benign
            ),
            "benign_cases": benign_total,
            "benign_false_alarm_rate": _rate(flagged_benign, benign_total),
            "benign_false_alarms_by_class": {k: h for k, (h, _) in sorted(benign.items()) if h},
        }
    return out


def _of(cases: tuple[Case, ...], split: str | None) -> list[Case]:
    return [case for case in cases if split in (None, case.split)]


def _summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "median_ms": round(statistics.median(ordered), 3),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 3),
        "p99_ms": round(ordered[int(0.99 * (len(ordered) - 1))], 3),
        "max_ms": round(ordered[-1], 3),
    }


def _timed(run: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU milliseconds of one call (CPU counts every thread the embedder uses)."""
    start, start_cpu = time.perf_counter(), time.process_time()
    run()
    return (time.perf_counter() - start) * 1000, (time.process_time() - start_cpu) * 1000


def _texts() -> list[str]:
    return [case.text for case in (*PII, *INJECTIONS, *BENIGN, *SECRETS)]


def latency(check: Callable[[str], Verdict], repeats: int) -> dict[str, Any]:
    """Milliseconds per fact over every corpus text, one fact at a time, `repeats` times (after
    one warm-up pass), learned layer included; the caches are emptied before each fact, so no
    verdict is a cache hit. `*_of_best` take each fact's fastest pass: what the code costs,
    without the shared machine's stalls."""
    texts = _texts()
    for text in texts:
        check(text)
    wall: list[float] = []
    cpu: list[float] = []
    best = [float("inf")] * len(texts)
    for _ in range(repeats):
        for index, text in enumerate(texts):
            clear_caches()
            elapsed, used = _timed(lambda text=text: check(text))  # type: ignore[misc]
            wall.append(elapsed)
            cpu.append(used)
            best[index] = min(best[index], used)
    fastest = sorted(best)
    return {
        "facts_timed": len(wall),
        **_summary(wall),
        "cpu": _summary(cpu),
        "cpu_p95_of_best_ms": round(fastest[int(0.95 * (len(fastest) - 1))], 3),
    }


def batch_latency(repeats: int, size: int = BATCH, store: bool = False) -> dict[str, Any]:
    """Milliseconds per fact when `size` facts are screened together, as one extraction's are
    (`FactScreen.check_batch`: the learned layer embeds them in one batch), learned layer
    included, caches emptied before each batch. With `store`, the write path's whole cost:
    also the store's embedding of each accepted fact whose vector screening did not hand over,
    one fact at a time as `LongTermMemory.remember_in` embeds it."""
    texts = _texts()
    batches = [texts[i : i + size] for i in range(0, len(texts), size)]
    embedder = init_embeddings(OFFLINE) if store else None
    embedded = [0]

    def run(batch: list[str]) -> None:
        verdicts = FactScreen().check_batch([(text, None) for text in batch])
        if embedder is None:
            return
        for verdict in verdicts:
            if verdict.accepted and getattr(verdict, "embedding", None) is None:
                embedder.embed_documents([verdict.text])
                embedded[0] += 1

    for batch in batches:
        run(batch)
    embedded[0] = 0
    wall: list[float] = []
    cpu: list[float] = []
    best = [float("inf")] * len(batches)
    for _ in range(repeats):
        for index, batch in enumerate(batches):
            clear_caches()
            elapsed, used = _timed(lambda batch=batch: run(batch))  # type: ignore[misc]
            wall.append(elapsed / len(batch))
            cpu.append(used / len(batch))
            best[index] = min(best[index], used / len(batch))
    fastest = sorted(best)
    out: dict[str, Any] = {
        "batch_size": size,
        "facts_timed": len(texts) * repeats,
        "wall_per_fact": _summary(wall),
        "cpu_per_fact": _summary(cpu),
        "cpu_per_fact_p95_of_best_ms": round(fastest[int(0.95 * (len(fastest) - 1))], 3),
    }
    if store:
        out["store_embeddings_per_fact"] = round(embedded[0] / (len(texts) * repeats), 3)
    return out


CONVERSATIONS = Path("..") / "shared" / "data" / "locomo" / "locomo_dev.json"
"""Relative to the repository root, where the shared test data sits beside it."""


def conversation_turns(path: Path) -> dict[str, Any]:
    """Real chat turns (LoCoMo), none of which holds a credential or encoded PII: how many the
    secret rules refuse, and how many the decoded reading redacts."""
    rows = json.loads(path.read_text(encoding="utf-8"))
    turns = [
        turn["text"]
        for sample in rows
        for key, session in sample["conversation"].items()
        if key.startswith("session_") and isinstance(session, list)
        for turn in session
        if isinstance(turn.get("text"), str)
    ]
    secret = decoded = 0
    for turn in turns:
        clean = normalise(turn)
        secret += bool(find_secrets(clean))
        decoded += decode(clean) != clean and redact(clean).changed
    return {"turns": len(turns), "secret_refusals": secret, "decoded_redactions": decoded}


def _check(text: str) -> Verdict:
    return FactScreen().check(text)


def run(repeats: int, conversations: Path | None = None) -> dict[str, Any]:
    ours = {
        "quality": quality(_check),
        "latency": latency(_check, repeats),
        "latency_in_batches": batch_latency(repeats),
        "write_path_in_batches": batch_latency(repeats, store=True),
    }
    if conversations is not None and conversations.exists():
        ours["conversation_turns"] = conversation_turns(conversations)
    with _peer():
        peer = {"quality": quality(_check), "latency": latency(_check, repeats)}
    return {
        "corpus": {
            "pii": len(PII),
            "injections": len(INJECTIONS),
            "benign": len(BENIGN),
            "secrets": len(SECRETS),
            "split_pairs": len(SPLITS),
        },
        "ours": ours,
        "peer_canonical_only": peer,
        "ratios": {
            "median_latency_ours_over_peer": round(
                ours["latency"]["median_ms"] / peer["latency"]["median_ms"], 2
            ),
            "p95_latency_ours_over_peer": round(
                ours["latency"]["p95_ms"] / peer["latency"]["p95_ms"], 2
            ),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="passes over the corpus to time")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    parser.add_argument(
        "--conversations",
        type=Path,
        default=CONVERSATIONS,
        help=f"LoCoMo turns for the false-alarm count (default: {CONVERSATIONS}, if present)",
    )
    args = parser.parse_args()
    figures = run(args.repeats, args.conversations)
    text = json.dumps(figures, indent=2, ensure_ascii=False)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(text + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
