"""Train the learned injection layer and write the weights the package ships.

The corpus is `bench/data/injection/` (see `bench.injection_corpus`). Every line is unmasked,
redacted and embedded by the offline e5 exactly as the write path does it (the passage vector
the store keeps), a one-hidden-layer network
is fitted in numpy (class-balanced cross-entropy, Adam, weight decay), and the decision
threshold is chosen on out-of-fold scores of the training lines alone: the lowest score that
keeps those false alarms at or under `FALSE_ALARM_BUDGET`.

    python -m bench.train_injection            # writes recollect/gate/injection_weights.npz
"""

from __future__ import annotations

import argparse
import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from bench.injection_corpus import Line, load
from recollect.gate.injection_classifier import (
    WEIGHTS,
    InjectionModel,
    Vectors,
    embed_readable,
    readable,
)

CACHE = Path(__file__).resolve().parent / "out" / "injection_passage_vectors.npz"
"""e5 passage vectors (the store's kind) by readable form, so a rerun embeds only new lines."""
HIDDEN = 64
EPOCHS = 400
"""Full-batch steps; 150 underfit once the corpus passed 3,000 lines, 300 once it passed 10,000."""
LEARNING_RATE = 0.02
WEIGHT_DECAY = 1e-4
FALSE_ALARM_BUDGET = 0.01
"""Out-of-fold false alarms allowed on the training lines when the threshold is chosen."""
INNER_FOLDS = 3
SEED = 7

Labels = NDArray[np.float32]


def _key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def vectors(lines: Sequence[Line], cache: Path | None = CACHE) -> Vectors:
    """The e5 vector of each line's readable form, cached by that form across runs."""
    known: dict[str, Vectors] = {}
    if cache is not None and cache.exists():
        with np.load(cache) as data:
            known = {k: data[k] for k in data.files}
    forms = [readable(line.text) for line in lines]
    missing = list(dict.fromkeys(form for form in forms if _key(form) not in known))
    if missing:
        for form, row in zip(missing, embed_readable(missing), strict=True):
            known[_key(form)] = row
        if cache is not None:
            cache.parent.mkdir(parents=True, exist_ok=True)
            np.savez_compressed(cache, **known)  # type: ignore[arg-type]
    return np.stack([known[_key(form)] for form in forms]).astype(np.float32)


def labels(lines: Sequence[Line]) -> Labels:
    return np.asarray([line.injection for line in lines], dtype=np.float32)


def fit_network(x: Vectors, y: Labels, seed: int = SEED) -> InjectionModel:
    """Weights for `InjectionModel` (threshold 0.5 until `choose_threshold` sets one)."""
    rng = np.random.default_rng(seed)
    n, dim = x.shape
    params = {
        "w1": rng.normal(0, (2 / dim) ** 0.5, (dim, HIDDEN)).astype(np.float32),
        "b1": np.zeros(HIDDEN, np.float32),
        "w2": rng.normal(0, (1 / HIDDEN) ** 0.5, HIDDEN).astype(np.float32),
        "b2": np.zeros(1, np.float32),
    }
    positive = max(float(y.sum()), 1.0)
    weight = np.where(y > 0, n / (2 * positive), n / (2 * max(n - positive, 1.0))).astype(
        np.float32
    )
    moments = {k: (np.zeros_like(v), np.zeros_like(v)) for k, v in params.items()}
    for step in range(1, EPOCHS + 1):
        pre = x @ params["w1"] + params["b1"]
        hidden = np.maximum(pre, 0.0)
        prob = 1.0 / (1.0 + np.exp(-(hidden @ params["w2"] + params["b2"])))
        d_logit = (prob - y) * weight / n
        d_hidden = np.outer(d_logit, params["w2"]) * (pre > 0)
        grads = {
            "w2": hidden.T @ d_logit + WEIGHT_DECAY * params["w2"],
            "b2": np.array([d_logit.sum()], np.float32),
            "w1": x.T @ d_hidden + WEIGHT_DECAY * params["w1"],
            "b1": d_hidden.sum(axis=0),
        }
        for k, grad in grads.items():
            m, v = moments[k]
            m[:] = 0.9 * m + 0.1 * grad
            v[:] = 0.999 * v + 0.001 * grad**2
            m_hat, v_hat = m / (1 - 0.9**step), v / (1 - 0.999**step)
            params[k] = (params[k] - LEARNING_RATE * m_hat / (np.sqrt(v_hat) + 1e-8)).astype(
                np.float32
            )
    return InjectionModel(params["w1"], params["b1"], params["w2"], float(params["b2"][0]), 0.5)


def folds(count: int, k: int, seed: int = SEED) -> list[NDArray[np.int64]]:
    order = np.random.default_rng(seed).permutation(count)
    return [order[i::k] for i in range(k)]


def choose_threshold(x: Vectors, y: Labels, budget: float = FALSE_ALARM_BUDGET) -> float:
    """The lowest threshold whose out-of-fold false alarms on (x, y) stay within `budget`."""
    scores = np.zeros(len(y), np.float32)
    for held in folds(len(y), INNER_FOLDS):
        keep = np.setdiff1d(np.arange(len(y)), held)
        scores[held] = fit_network(x[keep], y[keep]).scores(x[held])
    benign = np.sort(scores[y == 0])[::-1]
    allowed = int(budget * len(benign))
    edge = float(benign[allowed]) if allowed < len(benign) else 0.0
    return float(np.clip(np.nextafter(np.float32(edge), np.float32(1)), 0.05, 0.99))


def train(x: Vectors, y: Labels) -> InjectionModel:
    """The network on all of (x, y), with its threshold chosen on (x, y)'s own folds."""
    model = fit_network(x, y)
    return InjectionModel(model.w1, model.b1, model.w2, model.b2, choose_threshold(x, y))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=WEIGHTS, help="where to write the weights")
    args = parser.parse_args()
    lines = load()
    x, y = vectors(lines), labels(lines)
    model = train(x, y)
    model.save(args.out)
    print(f"{len(lines)} lines ({int(y.sum())} injections); threshold {model.threshold:.3f}")
    print(f"weights -> {args.out} ({args.out.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
