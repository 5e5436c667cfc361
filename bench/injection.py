"""Does the learned injection layer generalise, and what does it cost per fact?

Three splits of `bench/data/injection/`, each training a fresh network and choosing its
threshold on the training folds only (`bench.train_injection`), then scoring the held-out part:

- random: 5 folds over all lines;
- leave one language out: every language held out in turn (its written, tool-call and
  disguised lines together), so the figure is for a language the network never saw;
- leave one style out: every style held out in turn (direct, preference, paraphrase,
  exfiltration, tool-call, disguised; benign life and security look-alikes);
- leave one idea out: each of the sixteen written ideas held out in all 27 languages at once
  (with its tool-call and disguised variants), and the English-only lines as one more group.
  The written languages share their ideas, so this split, not the language one, says how the
  layer meets a sentence whose meaning it never saw.

For each: recall (injections refused) and false-alarm rate (benign refused), for the network
alone and for the network beside the rules (what the write path does). The shipped weights are
also run on the rules' own corpus (`tests/data/screening/`, written apart from this one), and
the layer's cost per fact is timed: unmask + e5 embedding + network, wall and CPU.

    python -m bench.injection --json bench/out/injection.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from bench.injection_corpus import Line, load
from bench.train_injection import CACHE, Labels, folds, labels, train, vectors
from recollect.extraction.injection_classifier import Vectors, embed, shipped_model
from recollect.extraction.injection_patterns import RULES
from recollect.extraction.normalise import views

Mask = NDArray[np.bool_]


def rules_fire(text: str) -> bool:
    seen = "\n".join(views(text))
    return any(rule.search(seen) for _, rule in RULES)


def _rates(refused: Mask, y: Labels) -> dict[str, Any]:
    injections, benign = y > 0, y == 0
    out: dict[str, Any] = {"injections": int(injections.sum()), "benign": int(benign.sum())}
    if injections.any():
        out["recall"] = round(float(refused[injections].mean()), 4)
    if benign.any():
        out["false_alarm_rate"] = round(float(refused[benign].mean()), 4)
    return out


def _held_out(
    x: Vectors, y: Labels, rules: Mask, train_idx: NDArray[np.int64], test_idx: NDArray[np.int64]
) -> tuple[Mask, Mask]:
    model = train(x[train_idx], y[train_idx])
    learned = model.scores(x[test_idx]) >= model.threshold
    return learned, learned | rules[test_idx]


def _pooled(
    x: Vectors, y: Labels, rules: Mask, groups: dict[str, NDArray[np.int64]]
) -> dict[str, Any]:
    """Each group held out in turn; per-group and pooled figures."""
    every = np.arange(len(y))
    learned_all = np.zeros(len(y), bool)
    both_all = np.zeros(len(y), bool)
    per_group: dict[str, Any] = {}
    for name, test_idx in groups.items():
        learned, both = _held_out(x, y, rules, np.setdiff1d(every, test_idx), test_idx)
        learned_all[test_idx], both_all[test_idx] = learned, both
        per_group[name] = {
            "learned": _rates(learned, y[test_idx]),
            "with_rules": _rates(both, y[test_idx]),
        }
    covered = np.concatenate(list(groups.values()))
    return {
        "learned": _rates(learned_all[covered], y[covered]),
        "with_rules": _rates(both_all[covered], y[covered]),
        "rules_alone": _rates(rules[covered], y[covered]),
        "by_group": per_group,
    }


def _groups(lines: Sequence[Line], key: Callable[[Line], str]) -> dict[str, NDArray[np.int64]]:
    names = sorted({key(line) for line in lines})
    return {n: np.asarray([i for i, ln in enumerate(lines) if key(ln) == n]) for n in names}


def generalisation(
    lines: Sequence[Line], only: Sequence[str] = (), cache: Path | None = CACHE
) -> dict[str, Any]:
    """Random, leave-one-language-out, -style-out and -idea-out figures (`only` picks groups
    to hold out, for a quick run)."""
    x, y = vectors(lines, cache), labels(lines)
    rules = np.asarray([rules_fire(line.text) for line in lines])
    random = {f"fold{i}": idx for i, idx in enumerate(folds(len(y), 5))}
    by_lang = _groups(lines, lambda line: line.lang)
    by_style = _groups(lines, lambda line: line.style)
    by_idea = _groups(lines, lambda line: line.concept)
    if only:
        random = {}
        by_lang = {k: v for k, v in by_lang.items() if k in only}
        by_style = {k: v for k, v in by_style.items() if k in only}
        by_idea = {k: v for k, v in by_idea.items() if k in only}
    out: dict[str, Any] = {}
    if random:
        out["random_5_fold"] = _pooled(x, y, rules, random)
    if by_lang:
        out["leave_one_language_out"] = _pooled(x, y, rules, by_lang)
    if by_style:
        out["leave_one_style_out"] = _pooled(x, y, rules, by_style)
    if by_idea:
        out["leave_one_idea_out"] = _pooled(x, y, rules, by_idea)
    return out


def rules_corpus() -> dict[str, Any]:
    """The shipped weights on `tests/data/screening/` (injections and benign look-alikes)."""
    from tests.support.screening_corpus import BENIGN, INJECTIONS

    model = shipped_model()
    out: dict[str, Any] = {}
    for name, cases in (("injections", INJECTIONS), ("benign", BENIGN)):
        texts = [case.text for case in cases]
        learned = model.scores(embed(texts)) >= model.threshold
        rules = np.asarray([rules_fire(text) for text in texts])
        refused = learned | rules
        out[name] = {
            "cases": len(texts),
            "refused_by_rules": int(rules.sum()),
            "refused_by_learned": int(learned.sum()),
            "refused_by_either": int(refused.sum()),
            "refused_by_learned_only": (
                [t for t, r, le in zip(texts, rules, learned, strict=True) if le and not r]
                if name == "benign"
                else int((learned & ~rules).sum())
            ),
        }
    return out


def latency(texts: Sequence[str], repeats: int) -> dict[str, float]:
    """Milliseconds per fact for the learned layer (unmask + embed + network), after a
    warm-up pass: wall time, and CPU time (what the fact costs on a quiet core)."""
    model = shipped_model()
    for text in texts:
        model.scores(embed([text]))
    wall: list[float] = []
    cpu: list[float] = []
    for _ in range(repeats):
        for text in texts:
            start, start_cpu = time.perf_counter(), time.process_time()
            model.scores(embed([text]))
            wall.append((time.perf_counter() - start) * 1000)
            cpu.append((time.process_time() - start_cpu) * 1000)

    def summary(samples: list[float]) -> dict[str, float]:
        ordered = sorted(samples)
        return {
            "median_ms": round(statistics.median(ordered), 2),
            "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 2),
        }

    return {"facts_timed": len(wall), "wall": summary(wall), "cpu": summary(cpu)}  # type: ignore[dict-item]


def run(only: Sequence[str] = (), timed: int = 200, repeats: int = 1) -> dict[str, Any]:
    lines = load()
    model = shipped_model()
    return {
        "corpus": {
            "lines": len(lines),
            "injections": sum(line.injection for line in lines),
            "languages": len({line.lang for line in lines}),
            "styles": sorted({line.style for line in lines}),
        },
        "shipped_threshold": round(model.threshold, 4),
        "generalisation": generalisation(lines, only),
        "rules_corpus": rules_corpus() if not only else {},
        "latency": latency([line.text for line in lines[:timed]], repeats),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=(), help="hold out just these groups")
    parser.add_argument("--timed", type=int, default=200, help="facts to time")
    parser.add_argument("--repeats", type=int, default=1, help="passes over the timed facts")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    args = parser.parse_args()
    figures = run(args.only, args.timed, args.repeats)
    text = json.dumps(figures, indent=2, ensure_ascii=False)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(text + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
