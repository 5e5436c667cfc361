"""Sign codes: can the binary codes of an embedder's vectors rank a large user's facts?

Past `fact_sql.EXACT_UP_TO` facts, recall ranks a user by the Hamming distance of
`binary_quantize` codes (the signs of a vector's components) and scores only the best
`fact_sql.RESCORED` exactly, unless the query's code differs from the scope's sampled codes in
less than `fact_sql.CODES_SPREAD` of its signs (then the scope is ranked exactly). This asks
whether that test is right for an embedder, on real text: LoCoMo's dialogue turns, observations
and session summaries as facts, its questions as queries.

A pool of P vectors stands for a user of U facts by keeping the share the prefilter keeps:
`RESCORED` * P / U codes are scored, and the top 40 * P / U (at least 1) are compared with an
exact scan's (neighbours are as dense in a pool of P as in U facts drawn alike). For each user
size: the overlap with the raw codes, and with codes of the vectors less their mean (what a
deployment-wide centre would give). `spread` is the mean share of signs in which a query's code
differs from the first 2,000 facts' codes, what the read measures.

    python -m bench.sign_codes --data ../shared/data/locomo/locomo_dev.json [--embeddings NAME]
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

from recollect.longterm.fact_sql import CODES_SAMPLED, CODES_SPREAD, RESCORED
from recollect.models.embeddings import embed_texts, embeddings_name, init_embeddings

DEFAULT_DATA = Path("..") / "shared" / "data" / "locomo" / "locomo_dev.json"
USER_SIZES = (20_000, 50_000, 100_000)
TOP = 40
"""The overlap `bench.recall_latency` reports: an exact scan's top 40."""

Vectors = npt.NDArray[np.float32]


def texts_and_questions(path: Path) -> tuple[list[str], list[str]]:
    """Every distinct turn, observation and session summary, and every distinct question."""
    texts: list[str] = []
    questions: list[str] = []
    for sample in json.loads(path.read_text()):
        for key, turns in sample["conversation"].items():
            if key.startswith("session_") and isinstance(turns, list):
                texts += [turn["text"] for turn in turns if turn.get("text")]
        for speakers in (sample.get("observation") or {}).values():
            for notes in (speakers or {}).values():
                texts += [note[0] if isinstance(note, list) else str(note) for note in notes]
        texts += list((sample.get("session_summary") or {}).values())
        questions += [qa["question"] for qa in sample["qa"]]
    distinct = dict.fromkeys(text.strip() for text in texts if text and text.strip())
    return list(distinct), list(dict.fromkeys(questions))


def hamming(queries: Vectors, facts: Vectors) -> Vectors:
    """Every query's code's Hamming distance to every fact's: |q| + |f| - 2 q.f over the signs."""
    query_signs = (queries > 0).astype(np.float32)
    fact_signs = (facts > 0).astype(np.float32)
    return np.asarray(
        query_signs.sum(axis=1)[:, None]
        + fact_signs.sum(axis=1)[None, :]
        - 2 * query_signs @ fact_signs.T,
        dtype=np.float32,
    )


def spread(queries: Vectors, facts: Vectors) -> float:
    """The mean share of signs in which a query's code differs from the sampled facts' codes."""
    return float(hamming(queries, facts[:CODES_SAMPLED]).mean() / facts.shape[1])


def overlap(queries: Vectors, facts: Vectors, *, scored: int, top: int, seed: int = 0) -> float:
    """The share of an exact scan's `top` that the `scored` nearest codes, scored, keep (ties in
    Hamming distance in random order, as a scan meets them)."""
    rng = np.random.default_rng(seed)
    similarities = queries @ facts.T
    kept = []
    for distances, row in zip(hamming(queries, facts), similarities, strict=True):
        nearest_codes = np.lexsort((rng.random(len(facts)), distances))[:scored]
        found = nearest_codes[np.argsort(-row[nearest_codes])[:top]]
        exact = np.argpartition(-row, top)[:top]
        kept.append(len(set(found.tolist()) & set(exact.tolist())) / top)
    return float(np.mean(kept))


def measure(queries: Vectors, facts: Vectors) -> dict[str, Any]:
    queries = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    facts = facts / np.linalg.norm(facts, axis=1, keepdims=True)
    centre = facts.mean(axis=0)
    signs = (facts > 0).mean(axis=0)
    result: dict[str, Any] = {
        "facts": len(facts),
        "queries": len(queries),
        "dimensions": facts.shape[1],
        "one_sign_in_nine_of_ten": int(((signs > 0.9) | (signs < 0.1)).sum()),
        "spread_raw": round(spread(queries, facts), 3),
        "spread_centred": round(spread(queries - centre, facts - centre), 3),
        "codes_spread": CODES_SPREAD,
        "users": [],
    }
    for size in USER_SIZES:
        scored = max(1, round(RESCORED * len(facts) / size))
        top = max(1, round(TOP * len(facts) / size))
        result["users"].append({
            "user_facts": size,
            "scored": scored,
            "top": top,
            "raw": round(overlap(queries, facts, scored=scored, top=top), 3),
            "centred": round(overlap(queries - centre, facts - centre, scored=scored, top=top), 3),
        })  # fmt: skip
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None, help=f"default: {DEFAULT_DATA}")
    parser.add_argument("--embeddings", default=None, help="offline | minilm | provider:model")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    data = args.data or Path(__file__).resolve().parents[1] / DEFAULT_DATA
    if not data.is_file():
        print(f"bench.sign_codes skipped: no LoCoMo data at {data}; pass --data PATH")
        return 0
    embedder = init_embeddings(embeddings_name(args.embeddings))
    if embedder is None:
        parser.error("this benchmark measures vectors; choose an embedder")
    texts, questions = texts_and_questions(data)
    facts = np.asarray(embed_texts(embedder, texts), dtype=np.float32)
    queries = np.asarray([embedder.embed_query(q) for q in questions], dtype=np.float32)
    result = measure(queries, facts) | {"embeddings": embeddings_name(args.embeddings)}
    print(f"{result['facts']:,} facts, {result['queries']:,} questions, {result['embeddings']}; "
          f"{result['one_sign_in_nine_of_ten']} of {result['dimensions']} components keep one "
          f"sign in nine vectors of ten")  # fmt: skip
    print(f"spread {result['spread_raw']} raw, {result['spread_centred']} less the mean; "
          f"codes rank a scope from {CODES_SPREAD}: "
          f"{'yes' if result['spread_raw'] >= CODES_SPREAD else 'no, read exactly'}")  # fmt: skip
    print("user facts | scored, top | overlap, raw codes | overlap, less the mean")
    for user in result["users"]:
        print(f"{user['user_facts']:>10,} | {user['scored']:>6}, {user['top']:>3} | "
              f"{user['raw']:>17} | {user['centred']:>22}")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
