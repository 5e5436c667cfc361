"""The learned injection layer: a small classifier on the default embedder's vectors.

The rules in `injection_patterns` catch the shapes they were written for; a fact that says
the same thing in another language, as a "preference", or in words no rule names gets past
them. This layer reads what the fact means instead: the fact is unmasked (`unmask`), embedded
by multilingual e5 (the offline embedder, in-process) and scored by a one-hidden-layer network
whose weights ship beside this file (`injection_weights.npz`, trained by
`bench/train_injection.py` on `bench/data/injection/`). Numpy only; no torch at run time.
When unmasking undid a disguise, the rules read the readable form first.

`RECOLLECT_INJECTION_MODEL=off` turns the layer off (the rules still run), and
`RECOLLECT_INJECTION_THRESHOLD` moves its decision threshold (default `REFUSE_AT`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from recollect.extraction.injection_patterns import RULES
from recollect.extraction.normalise import canonical, views
from recollect.extraction.redaction import redact
from recollect.extraction.unmask import unmasked
from recollect.longterm.embeddings import OFFLINE, OfflineE5Embeddings, init_embeddings

WEIGHTS = Path(__file__).with_name("injection_weights.npz")
SWITCH_ENV = "RECOLLECT_INJECTION_MODEL"
THRESHOLD_ENV = "RECOLLECT_INJECTION_THRESHOLD"
REFUSE_AT = 0.8
"""The score from which a fact is refused. Training picks the threshold that keeps its own
folds' false alarms at 1% (about 0.5); on real chat facts that corpus never saw (LoCoMo's
observations, conversations 1-3) that refused 4.6%, a user's true facts lost. At 0.8 they
lose 1.9% (0.5% on conversations 4-6, not used to choose): `docs/benchmarks.md`."""
REASON = "injection: reads as an instruction to the assistant (learned, score {score:.2f})"

Vectors = NDArray[np.float32]
_PLACEHOLDER = re.compile(r"\[[A-Z_]+\]")


@dataclass(frozen=True)
class InjectionModel:
    """Weights of `score = sigmoid(w2 · relu(W1 x + b1) + b2)` and the decision threshold,
    which was chosen on training folds only."""

    w1: Vectors
    b1: Vectors
    w2: Vectors
    b2: float
    threshold: float

    def scores(self, vectors: Vectors) -> Vectors:
        """The probability that each row (an e5 vector) is an injection."""
        hidden = np.maximum(vectors @ self.w1 + self.b1, 0.0)
        logits = hidden @ self.w2 + self.b2
        scores: Vectors = (1.0 / (1.0 + np.exp(-logits))).astype(np.float32)
        return scores

    def save(self, path: Path) -> None:
        np.savez_compressed(
            path,
            w1=self.w1.astype(np.float32),
            b1=self.b1.astype(np.float32),
            w2=self.w2.astype(np.float32),
            b2=np.float32(self.b2),
            threshold=np.float32(self.threshold),
        )

    @classmethod
    def load(cls, path: Path = WEIGHTS) -> InjectionModel:
        with np.load(path) as data:
            return cls(
                w1=data["w1"],
                b1=data["b1"],
                w2=data["w2"],
                b2=float(data["b2"]),
                threshold=float(data["threshold"]),
            )


@lru_cache(maxsize=1)
def shipped_model() -> InjectionModel:
    """The weights in the package, read once per process."""
    return InjectionModel.load(WEIGHTS)


def _embedder() -> OfflineE5Embeddings:
    embedder = init_embeddings(OFFLINE)
    assert isinstance(embedder, OfflineE5Embeddings)
    return embedder


def readable(text: str) -> str:
    """What the classifier reads: the fact with its disguises undone and its personal values
    and secrets left out ("Amex is the default"): a card number, a key or an address says
    nothing about whether the sentence is an order, and its placeholder would become a cue."""
    plain = redact(unmasked(text, _embedder().token_count)).text
    return " ".join(_PLACEHOLDER.sub(" ", plain).split())


def embed_readable(readables: list[str]) -> Vectors:
    """e5 query vectors of texts already made readable."""
    embedder = _embedder()
    rows = [embedder.embed_query(text) for text in readables]
    return np.asarray(rows, dtype=np.float32).reshape(len(rows), -1)


def embed(texts: list[str]) -> Vectors:
    """e5 query vectors of the readable form of each text (the form the weights learned)."""
    return embed_readable([readable(text) for text in texts])


def injection_score(text: str, model: InjectionModel | None = None) -> float:
    """The probability that `text` is an instruction to the assistant rather than a fact."""
    if model is None:
        return _shipped_score(text)
    return float(model.scores(embed([text]))[0])


@lru_cache(maxsize=4096)
def _shipped_score(text: str) -> float:
    """Scores by the shipped weights, remembered: one fact is screened on several paths."""
    return float(shipped_model().scores(embed([text]))[0])


def forget_scores() -> None:
    """Drop the remembered scores (a benchmark times the scoring itself)."""
    _shipped_score.cache_clear()


def decision_threshold() -> float:
    """The score from which a fact is refused: `RECOLLECT_INJECTION_THRESHOLD`, else the
    higher of training's threshold and `REFUSE_AT`."""
    raw = os.environ.get(THRESHOLD_ENV, "").strip()
    if raw:
        try:
            value = float(raw)
        except ValueError:
            raise ValueError(f"{THRESHOLD_ENV} must be a number in (0, 1), not {raw!r}") from None
        if not 0.0 < value < 1.0:
            raise ValueError(f"{THRESHOLD_ENV} must be a number in (0, 1), not {raw!r}")
        return value
    return max(shipped_model().threshold, REFUSE_AT)


def enabled() -> bool:
    return os.environ.get(SWITCH_ENV, "on").strip().lower() not in {"off", "0", "false", "no"}


def learned_reasons(text: str) -> tuple[str, ...]:
    """Reasons to refuse `text` found once it is unmasked: the rules on its readable form (when
    a disguise was undone), then the network's score; none when the layer is switched off."""
    if not enabled() or not text.strip():
        return ()
    form = unmasked(text, _embedder().token_count)
    if form != " ".join(canonical(text).split()):
        seen = "\n".join(views(form))
        ruled = [f"injection: {name} (unmasked)" for name, rule in RULES if rule.search(seen)]
        if ruled:
            return tuple(dict.fromkeys(ruled))
    if too_short(readable(text)):
        return ()
    score = injection_score(text)
    return (REASON.format(score=score),) if score >= decision_threshold() else ()


def too_short(form: str) -> bool:
    """A Latin-script remainder under three words and 16 characters ("WhatsApp" once the
    number is left out) gives the network too little to read; the rules still judge it."""
    return form.isascii() and len(form.split()) < 3 and len(form) < 16
