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
import ast
import json
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from bench.injection_corpus import Line, heldout, load
from bench.train_injection import CACHE, Labels, folds, labels, train, vectors
from recollect.gate.injection_classifier import (
    InjectionModel,
    Vectors,
    decision_threshold,
    default_stored,
    embed,
    embed_readable,
    readable,
    shipped_model,
    too_short,
)
from recollect.gate.injection_patterns import RULES
from recollect.gate.normalise import views

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
        random = {k: v for k, v in random.items() if k in only}
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


def held_out(model: InjectionModel | None = None, threshold: float | None = None) -> dict[str, Any]:
    """The shipped weights (or `model`) on `bench/data/injection/heldout.jsonl`, which no
    network trains on: benign refused and capability texts stored, overall and by class,
    language and style, for the network at the operating threshold alone and beside the rules
    (what the write path does)."""
    lines = heldout()
    model = model or shipped_model()
    threshold = decision_threshold() if threshold is None else threshold
    learned = _scores([line.text for line in lines], model) >= threshold
    both = learned | np.asarray([rules_fire(line.text) for line in lines])
    y = labels(lines)

    def figures(index: NDArray[np.int64]) -> dict[str, Any]:
        out: dict[str, Any] = {
            "benign": int((y[index] == 0).sum()),
            "capability": int(y[index].sum()),
        }
        for name, refused in (("learned", learned), ("with_rules", both)):
            if (y[index] == 0).any():
                out[f"{name}_benign_refused"] = round(
                    float(refused[index][y[index] == 0].mean()), 4
                )
            if (y[index] > 0).any():
                out[f"{name}_capability_stored"] = round(
                    float(1 - refused[index][y[index] > 0].mean()), 4
                )
        return out

    def by(key: Callable[[Line], str]) -> dict[str, Any]:
        return {name: figures(index) for name, index in _groups(lines, key).items()}

    wrong = [
        {"text": line.text, "label": line.label, "lang": line.lang, "style": line.style}
        for line, refused in zip(lines, both, strict=True)
        if bool(refused) != line.injection
    ]
    return {
        "threshold": round(threshold, 4),
        "all": figures(np.arange(len(lines))),
        "by_class": by(lambda line: line.cls or line.concept),
        "by_language": by(lambda line: line.lang),
        "by_style": by(lambda line: line.style),
        "wrong_with_rules": wrong,
    }


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


CONVERSATIONS = Path("..") / "shared" / "data" / "locomo" / "locomo_dev.json"
"""Relative to the repository root, where the shared test data sits beside it."""
CHOSEN_ON = (0, 1, 2)
"""LoCoMo conversations the operating threshold is chosen on (1-3); 4-6 are only read."""
REAL_FACT_BUDGET = 0.02
"""True chat facts the operating threshold may refuse, on the conversations it is chosen on."""
GRID = (0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)


def _scores(texts: Sequence[str], model: InjectionModel | None = None) -> NDArray[np.float32]:
    """The shipped network's (or `model`'s) score of each text (0 for a remainder too short
    to read)."""
    forms = [readable(text) for text in texts]
    read = [i for i, form in enumerate(forms) if not too_short(form)]
    out = np.zeros(len(texts), np.float32)
    if read:
        out[read] = (model or shipped_model()).scores(embed_readable([forms[i] for i in read]))
    return out


def locomo(path: Path) -> dict[str, Any]:
    """Real chat facts (LoCoMo's observations, the kind the write path stores): how many the
    network alone refuses at training's threshold and over a grid, on conversations 1-3 (where
    the operating threshold is chosen: the lowest refusing under `REAL_FACT_BUDGET`) and 4-6
    (read only); and how many facts the network reads in a form other than the stored text
    (a disguise undone or a value left out), each of which costs a second embedding."""
    from bench.duplicates import observations

    samples = json.loads(path.read_text(encoding="utf-8"))
    chosen = [t for i, s in enumerate(samples) if i in CHOSEN_ON for t in observations(s)]
    read = [t for i, s in enumerate(samples) if i not in CHOSEN_ON for t in observations(s)]
    scores = {"chosen_on": _scores(chosen), "read_on": _scores(read)}
    trained = shipped_model().threshold
    rates = {
        f"{t:.2f}": {name: round(float((s >= t).mean()), 4) for name, s in scores.items()}
        for t in sorted({round(trained, 3), *GRID})
    }
    under = [t for t in GRID if (scores["chosen_on"] >= t).mean() < REAL_FACT_BUDGET]
    operating = max(trained, min(under)) if under else None
    every = chosen + read
    apart = sum(readable(t) != default_stored(t) for t in every)
    return {
        "facts": {"chosen_on": len(chosen), "read_on": len(read)},
        "training_threshold": round(trained, 4),
        "operating_threshold": operating,
        "refused_by_threshold": rates,
        "read_in_another_form": {"facts": apart, "rate": round(apart / len(every), 4)},
    }


def sentence_like(root: Path) -> list[str]:
    """String constants in the repository's tests that read like a sentence (three or more
    words, 12 to 300 characters, one line): text the network was never trained on."""
    found: dict[str, None] = {}
    for source in sorted((root / "tests").rglob("*.py")):
        tree = ast.parse(source.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value.strip()
                if (
                    "\n" not in text
                    and 12 <= len(text) <= 300
                    and len(text.split()) >= 3
                    and any(c.isalpha() for c in text)
                ):
                    found[text] = None
    return list(found)


def repo_strings(root: Path) -> dict[str, Any]:
    """How many of `sentence_like` the network alone would refuse, at training's and at the
    operating threshold (most are docstrings and SQL, never screened as facts)."""
    texts = sentence_like(root)
    scores = _scores(texts)
    trained, operating = shipped_model().threshold, decision_threshold()
    flagged = [t for t, s in zip(texts, scores, strict=True) if s >= operating]
    return {
        "strings": len(texts),
        "refused_at_training_threshold": int((scores >= trained).sum()),
        "refused_at_operating_threshold": len(flagged),
        "examples": flagged[:20],
    }


def latency(texts: Sequence[str], repeats: int) -> dict[str, Any]:
    """Milliseconds per fact for the learned layer (unmask + e5 embedding + network), one fact
    at a time after a warm-up pass: wall time, and CPU time (every thread the embedder uses)."""
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

    return {"facts_timed": len(wall), "wall": summary(wall), "cpu": summary(cpu)}


QUICK = ("fold0", "en", "de", "ja", "preference", "exfiltration", "i3", "i9", "b4", "b9")
"""Groups a `--quick` run holds out: one random fold, three languages, two styles, four ideas."""


def run(
    only: Sequence[str] = (),
    timed: int = 200,
    repeats: int = 1,
    conversations: Path | None = CONVERSATIONS,
) -> dict[str, Any]:
    lines = load()
    model = shipped_model()
    out = {
        "corpus": {
            "lines": len(lines),
            "injections": sum(line.injection for line in lines),
            "languages": len({line.lang for line in lines}),
            "styles": sorted({line.style for line in lines}),
            "ideas": len({line.concept for line in lines}),
        },
        "shipped_threshold": round(model.threshold, 4),
        "operating_threshold": decision_threshold(),
        "held_out": held_out(),
        "generalisation": generalisation(lines, only),
        "rules_corpus": rules_corpus() if not only else {},
        "repo_strings": repo_strings(Path.cwd()) if not only else {},
        "latency": latency([line.text for line in lines[:timed]], repeats),
    }
    if conversations is not None and conversations.exists():
        out["locomo_observations"] = locomo(conversations)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=(), help="hold out just these groups")
    parser.add_argument(
        "--quick", action="store_true", help=f"hold out only {', '.join(QUICK)} (a few minutes)"
    )
    parser.add_argument("--timed", type=int, default=200, help="facts to time")
    parser.add_argument("--repeats", type=int, default=1, help="passes over the timed facts")
    parser.add_argument(
        "--conversations",
        type=Path,
        default=CONVERSATIONS,
        help=f"LoCoMo, for real facts refused (default: {CONVERSATIONS}, if present)",
    )
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    args = parser.parse_args()
    figures = run(
        args.only or (QUICK if args.quick else ()), args.timed, args.repeats, args.conversations
    )
    text = json.dumps(figures, indent=2, ensure_ascii=False)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(text + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
