"""Near-duplicate calibration: which cosine threshold (and word test) merges true paraphrases
without merging distinct facts, for one embedder.

Two sets, embedded as stored facts (`embed_documents`):
- paraphrase pairs written by hand: the restatements an extraction model produces of one fact
  ("User prefers dark mode" / "The user prefers dark mode in their editor"), each tried in both
  orders (either side may be the one stored first);
- distinct facts: the LoCoMo observations of each conversation (written per session; a few
  restate an earlier session's, most are distinct facts), replayed through the write path in
  session order: each observation is compared with the five nearest already-kept ones (as
  `remember` fetches them, every observation treated as the same category, the worst case)
  and counts as merged away if the rule would reinforce one of them instead of inserting it.

For each candidate threshold it reports the share of paraphrase trials merged and the share of
LoCoMo observations merged away, with the cosine rule alone (cosine and equal numbers: the
rule before the word test) and with the word test of `recollect.longterm.duplicates`.

    python -m bench.duplicates --json bench/out/duplicates.json
    python -m bench.duplicates --embeddings minilm --json out.json   # needs the rerank extra
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from recollect.longterm.duplicates import WORD_COVERAGE, numbers, says_nothing_new
from recollect.longterm.supersession import normalise
from recollect.models.embeddings import init_embeddings

DEFAULT_DATA = Path("..") / "shared" / "data" / "locomo" / "locomo_dev.json"
"""Relative to the repository root, where the shared test data sits beside it."""
THRESHOLDS = (0.80, 0.85, 0.88, 0.90, 0.92, 0.93, 0.94, 0.95, 0.96, 0.97, 0.98)
COVERAGES = (0.5, 0.75, 0.8, 1.0)
NEIGHBOURS = 5
"""How many nearest facts of the category the write path compares a new fact with."""

PARAPHRASES: tuple[tuple[str, str], ...] = (
    ("User prefers dark mode", "The user prefers dark mode in their editor"),
    ("Lives in Lisbon", "The user lives in Lisbon, Portugal"),
    ("The user is vegetarian.", "User is a vegetarian"),
    ("Prefers tea over coffee", "The user prefers tea to coffee."),
    ("Works as a nurse", "The user works as a nurse."),
    ("The user's daughter is called Maya.", "User has a daughter named Maya"),
    ("Is allergic to peanuts", "The user has a peanut allergy."),
    ("Uses Python for data analysis", "The user uses Python for their data analysis work."),
    ("The user's favourite colour is green.", "User's favorite color is green"),
    ("Wants to run a marathon next year", "The user wants to run a marathon next year."),
    ("User uses PostgreSQL 16 in production", "The user runs PostgreSQL 16 in production."),
    ("Has two cats", "The user has two cats."),
    ("Speaks Portuguese and English", "The user speaks English and Portuguese."),
    ("The user prefers short answers.", "Prefers short, concise answers"),
    ("Is learning to play the guitar", "The user is learning guitar."),
    ("Their frontend is written in React", "The user's frontend uses React."),
    ("Works remotely from home", "The user works from home remotely."),
    ("Dislikes spicy food", "The user doesn't like spicy food."),
    ("The user's birthday is on 3 March.", "User's birthday: March 3"),
    ("Drives an electric car", "The user drives an electric car."),
    ("Melanie loves painting landscapes.", "Melanie enjoys painting landscapes."),
    ("Caroline is a transgender woman.", "Caroline identifies as a transgender woman."),
    ("Prefers meetings in the morning", "The user prefers morning meetings."),
    ("The user is training for a triathlon.", "Is training for a triathlon"),
    ("Deploys with Kubernetes", "The user deploys their services with Kubernetes."),
    ("Has a dog named Rex", "The user has a dog called Rex."),
    ("Reads science fiction novels", "The user reads sci-fi novels."),
    ("The user's partner is Sam.", "User's partner is named Sam"),
    ("Avoids gluten", "The user avoids gluten."),
    ("Is a night owl who works late", "The user is a night owl and works late."),
    ("Studies computer science at university", "The user studies computer science at uni."),
    ("Goes hiking every weekend", "The user goes hiking on weekends."),
    ("Is saving to buy a house", "The user is saving money to buy a house."),
    ("Plays chess online", "The user plays chess online."),
    ("Uses vim as their editor", "The user's editor is vim."),
    ("The user is based in Berlin.", "Is based in Berlin, Germany"),
    ("Does not drink alcohol", "The user doesn't drink alcohol."),
    ("Melanie has three children.", "Melanie is a mother of three children."),
    ("Caroline wants to become a counselor.", "Caroline wants to work as a counselor."),
    ("Volunteers at an animal shelter", "The user volunteers at the animal shelter."),
)
"""Same fact, two wordings; the second is sometimes a touch more specific, as models write."""

_CHANGED: tuple[tuple[str, str], ...] = (
    ("Likes coffee", "Does not like coffee"),
    ("Works as a nurse", "Used to work as a nurse"),
    ("Uses React 16", "Uses React 19"),
    ("Lives in Lisbon", "Lives in Porto"),
    ("Prefers dark mode", "Prefers light mode"),
    ("Has two cats", "Has two dogs"),
    ("Gina's favorite dance style is contemporary.", "Jon's favorite dance style is contemporary."),
    ("Melanie uses painting and pottery as a calming and satisfying creative outlet.",
     "Melanie finds blue a calming color and uses it to convey tranquility in her art."),
    ("Caroline gave a talk at a school event about her transgender journey.",
     "Caroline attended an LGBTQ conference recently and felt accepted."),
)  # fmt: skip
_ADDED: tuple[tuple[str, str], ...] = (
    ("Wants to learn Spanish", "Wants to learn Spanish and Italian"),
    ("Is allergic to peanuts", "Is allergic to peanuts and shellfish"),
    ("Plays tennis", "Plays tennis every Sunday with their brother"),
    ("Melanie has kids.", "Melanie has kids who love camping."),
)
NEAR_MISSES: tuple[tuple[str, str], ...] = (
    *_CHANGED,
    *((b, a) for a, b in _CHANGED),
    *_ADDED,
)
"""(stored, new) trials that must insert: a changed value, negation or person (either order),
or a new fact that adds one to the stored one."""

Matrix = npt.NDArray[np.float64]


def observations(sample: dict[str, Any]) -> list[str]:
    """A conversation's observations in session order (session -> speaker -> [text, evidence])."""
    sessions = sample.get("observation") or {}

    def order(key: str) -> int:
        digits = "".join(c for c in key if c.isdigit())
        return int(digits) if digits else 0

    texts: list[str] = []
    for key in sorted(sessions, key=order):
        for items in sessions[key].values():
            texts += [str(item[0]).strip() for item in items if item and str(item[0]).strip()]
    return texts


def embed(texts: Sequence[str], name: str) -> Matrix:
    embedder = init_embeddings(name)
    if embedder is None:
        raise SystemExit(f"--embeddings {name!r} has no vectors to calibrate")
    vectors = np.asarray(embedder.embed_documents(list(texts)), dtype=np.float64)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def repeats(
    new: str, old: str, similarity: float, threshold: float, coverage: float | None
) -> bool:
    """The write path's rule: same wording, or close embedding with equal numbers (and words)."""
    if normalise(new) == normalise(old):
        return True
    if similarity < threshold or numbers(new) != numbers(old):
        return False
    return coverage is None or says_nothing_new(new, old, coverage=coverage)


def pair_shares(
    pairs: Sequence[tuple[str, str]], name: str, *, both_orders: bool
) -> tuple[list[float], dict[str, dict[str, float]]]:
    """Per threshold and word test, the share of (stored, new) trials merged."""
    firsts = embed([a for a, _ in pairs], name)
    seconds = embed([b for _, b in pairs], name)
    cosines = [float(x) for x in np.sum(firsts * seconds, axis=1)]
    out: dict[str, dict[str, float]] = {}
    for t in THRESHOLDS:
        row: dict[str, float] = {}
        for label, cov in _word_tests():
            merged = sum(
                repeats(b, a, c, t, cov) + (both_orders and repeats(a, b, c, t, cov))
                for (a, b), c in zip(pairs, cosines, strict=True)
            )
            row[label] = merged / ((1 + both_orders) * len(pairs))
        out[f"{t:.2f}"] = row
    return cosines, out


def _word_tests() -> list[tuple[str, float | None]]:
    return [("cosine", None), *((f"words>={c:g}", c) for c in COVERAGES)]


def replay(texts: Sequence[str], vectors: Matrix, threshold: float, coverage: float | None) -> int:
    """Observations the write path would fold into an earlier one instead of storing."""
    kept: list[int] = []
    merged = 0
    for i, text in enumerate(texts):
        if kept:
            sims = vectors[kept] @ vectors[i]
            nearest = np.argsort(-sims)[:NEIGHBOURS]
            if any(repeats(text, texts[kept[j]], float(sims[j]), threshold, coverage)
                   for j in nearest):  # fmt: skip
                merged += 1
                continue
        kept.append(i)
    return merged


def locomo(data: Path, name: str) -> dict[str, Any]:
    samples = json.loads(data.read_text())
    conversations = [texts for s in samples if (texts := observations(s))]
    total = sum(len(t) for t in conversations)
    merged = {f"{t:.2f}": dict.fromkeys((label for label, _ in _word_tests()), 0)
              for t in THRESHOLDS}  # fmt: skip
    pairwise: list[float] = []
    for texts in conversations:
        vectors = embed(texts, name)
        sims = vectors @ vectors.T
        pairwise += [float(x) for x in sims[np.triu_indices(len(texts), k=1)]]
        for t in THRESHOLDS:
            for label, cov in _word_tests():
                merged[f"{t:.2f}"][label] += replay(texts, vectors, t, cov)
    cosines = np.asarray(pairwise)
    return {
        "conversations": len(conversations),
        "observations": total,
        "pairs": int(cosines.size),
        "pairwise_cosine": {
            "median": float(np.median(cosines)),
            "p99": float(np.percentile(cosines, 99)),
            "p999": float(np.percentile(cosines, 99.9)),
            "max": float(cosines.max()),
        },
        "merged_away": {
            t: {label: n / total for label, n in row.items()} for t, row in merged.items()
        },
        "merged_away_count": merged,
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    cosines, paraphrases = pair_shares(PARAPHRASES, args.embeddings, both_orders=True)
    near_cosines, near_misses = pair_shares(NEAR_MISSES, args.embeddings, both_orders=False)
    result: dict[str, Any] = {
        "embeddings": args.embeddings,
        "word_coverage_default": WORD_COVERAGE,
        "paraphrases": {
            "pairs": len(PARAPHRASES),
            "cosine": {"min": min(cosines), "median": float(np.median(cosines))},
            "merged": paraphrases,
        },
        "near_misses": {
            "trials": len(NEAR_MISSES),
            "cosines": near_cosines,
            "merged": near_misses,
        },
        "locomo": None,
    }
    data = args.data
    if not data.exists() and not data.is_absolute():  # the default is relative to the repo root
        data = Path(__file__).resolve().parents[1] / data
    if data.exists():
        result["locomo"] = locomo(data, args.embeddings)
    else:
        print(f"skipping LoCoMo: {args.data} not found (pass --data PATH)", file=sys.stderr)
    return result


def print_table(result: dict[str, Any]) -> None:
    labels = [label for label, _ in _word_tests()]
    para = result["paraphrases"]
    print(f"embeddings: {result['embeddings']}; paraphrase cosine min "
          f"{para['cosine']['min']:.3f}, median {para['cosine']['median']:.3f}")  # fmt: skip
    lo = result["locomo"]
    if lo:
        pc = lo["pairwise_cosine"]
        print(f"LoCoMo: {lo['observations']} observations, {lo['pairs']} pairs; cosine median "
              f"{pc['median']:.3f}, p99 {pc['p99']:.3f}, p99.9 {pc['p999']:.3f}")  # fmt: skip
    for title, table in (
        (f"paraphrase trials merged ({2 * para['pairs']}, higher is better)", para["merged"]),
        (f"near-miss trials merged ({result['near_misses']['trials']}, lower is better)",
         result["near_misses"]["merged"]),
        *((("LoCoMo observations merged away (lower is better)", lo["merged_away"]),) if lo
          else ()),
    ):  # fmt: skip
        print(f"\n{title}")
        print(f"{'cosine >=':>10}" + "".join(f"{label:>12}" for label in labels))
        for t, row in table.items():
            print(f"{t:>10}" + "".join(f"{row[label]:>12.1%}" for label in labels))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo JSON")
    parser.add_argument("--embeddings", default="offline", help="embedder name (default offline)")
    parser.add_argument("--json", type=Path, default=None, help="write the result here")
    args = parser.parse_args(argv)
    result = run(args)
    print_table(result)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
