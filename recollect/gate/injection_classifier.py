"""The learned injection layer: a small classifier on the default embedder's vectors.

The rules in `injection_patterns` catch the shapes they were written for; a fact that says
the same thing in another language, as a "preference", or in words no rule names gets past
them. This layer reads what a remembered text could do instead: how the user wants to be
treated (units, names, formality, length, language, tone, things to avoid), their own rules,
work and life are facts; a text that would send anything anywhere, reveal instructions or other
users' data, call tools, approve or skip a protected action, change a role, turn safety off or
instruct any AI reading it is refused, in any language or encoding. The fact is unmasked
(`unmask`), embedded by multilingual e5 (the offline embedder, in-process) and scored by a
one-hidden-layer network whose weights ship beside this file (`injection_weights.npz`, trained by
`bench/train_injection.py` on `bench/data/injection/`). Numpy only; no torch at run time.
The network reads e5's passage vector of the text the store will keep, so for most facts
(no disguise undone, no value redacted) screening's vector is the stored one: a fact is
embedded once, and a batch of facts together.
When unmasking undid a disguise, the rules read the readable form first.

`RECOLLECT_INJECTION_MODEL=off` turns the layer off (the rules still run), and
`RECOLLECT_INJECTION_THRESHOLD` moves its decision threshold (default `REFUSE_AT`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from recollect.gate.injection_patterns import RULES
from recollect.gate.normalise import canonical, normalised, views
from recollect.gate.redaction import redact
from recollect.gate.unmask import unmasked
from recollect.models.embeddings import (
    OFFLINE,
    OFFLINE_DIMENSIONS,
    QUERY_WINDOW_TOKENS,
    OfflineE5Embeddings,
    capped_query,
    init_embeddings,
)

WEIGHTS = Path(__file__).with_name("injection_weights.npz")
SWITCH_ENV = "RECOLLECT_INJECTION_MODEL"
THRESHOLD_ENV = "RECOLLECT_INJECTION_THRESHOLD"
REFUSE_AT = 0.85
"""The score from which a fact is refused. Training picks the threshold that keeps its own
folds' false alarms at 1% (0.69); there the write path's own corpus (`tests/data/screening/`)
loses true facts ("Mijn wachtwoord is verlopen", half an instruction split across two facts),
which it keeps at 0.85. Real chat facts (LoCoMo's observations) refused at 0.85: 0.15% of
conversations 1-3, 0.25% of 4-6. The held-out figures at both are in `bench.injection`."""
REASON = "injection: grants a capability or authority (learned, score {score:.2f})"

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


def shares_vectors(embedder: object) -> bool:
    """Whether a store embedding with `embedder` keeps the very vectors this layer reads (the
    offline e5's passage vectors), so a fact screened here need not be embedded again."""
    return isinstance(embedder, OfflineE5Embeddings)


def default_stored(text: str) -> str:
    """The form the write path stores under the default policy (normalised, redacted)."""
    return redact(normalised(text)).text


def _without_placeholders(text: str) -> str:
    return " ".join(_PLACEHOLDER.sub(" ", text).split())


@lru_cache(maxsize=4096)
def disguise_undone(text: str) -> str | None:
    """The readable form of `text` when unmasking undid a disguise, else None."""
    form = unmasked(text, _embedder().token_count)
    return form if form != " ".join(canonical(text).split()) else None


def readable(text: str, stored: str | None = None) -> str:
    """What the classifier reads: the stored form of the fact (`stored`; by default the
    default policy's), with its disguises undone and its personal values and secrets left out
    ("Amex is the default"): a card number, a key or an address says nothing about whether the
    sentence is an order, and its placeholder would become a cue. For most facts this is the
    stored text itself, so the vector the store keeps is the one the network reads."""
    form = disguise_undone(text)
    if form is not None:
        return _within_window(_without_placeholders(redact(normalised(form)).text))
    return _within_window(_without_placeholders(default_stored(text) if stored is None else stored))


def _within_window(text: str) -> str:
    """The text as valid UTF-8, cut to e5's window as a query is (`capped_query`), so any
    text can be embedded; a fact the write path stores is far shorter and stays as it is."""
    text = capped_query(text)
    count = _embedder().token_count
    while len(text) > 64 and count(text) > QUERY_WINDOW_TOKENS:
        text = capped_query(text, len(text) * 4 // 5)
    return text


def embed_readable(readables: Sequence[str]) -> Vectors:
    """e5 passage vectors (as the store embeds facts) of texts already made readable, in one
    batch: the extraction of one turn yields several facts, and a batch costs less per fact."""
    if not readables:
        return np.zeros((0, OFFLINE_DIMENSIONS), np.float32)
    return np.asarray(_embedder().embed_documents(list(readables)), dtype=np.float32)


def embed(texts: Sequence[str]) -> Vectors:
    """e5 vectors of the readable form of each text (the form the weights learned)."""
    return embed_readable([readable(text) for text in texts])


def injection_score(text: str, model: InjectionModel | None = None) -> float:
    """The probability that `text` grants a capability or authority rather than being a fact."""
    form = readable(text)
    if model is not None:
        return float(model.scores(embed_readable([form]))[0])
    if form not in _scores:
        _remember_score(form, float(shipped_model().scores(embed_readable([form]))[0]))
    return _scores[form]


_scores: dict[str, float] = {}
"""Scores by the shipped weights per readable form: one fact is screened on several paths."""
_SCORES_KEPT = 4096


def _remember_score(form: str, score: float) -> None:
    if len(_scores) >= _SCORES_KEPT:
        del _scores[next(iter(_scores))]
    _scores[form] = score


def forget_scores() -> None:
    """Drop the remembered scores and readings (a benchmark times the scoring itself)."""
    _scores.clear()
    disguise_undone.cache_clear()


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


@dataclass(frozen=True)
class Learned:
    """The layer's verdict on one fact, and the stored text's vector when it was embedded for
    the verdict (None otherwise): the write path stores that vector instead of embedding the
    same text again."""

    reasons: tuple[str, ...]
    vector: list[float] | None = None


def learned_batch(texts: Sequence[str], stored: Sequence[str]) -> list[Learned]:
    """Verdicts on facts (`texts`) that will be stored as `stored`: the rules on the readable
    form when a disguise was undone, then the network's score. The texts the network reads are
    embedded in one batch; where that is the stored text (no disguise, nothing redacted), its
    vector comes back for the store. Nothing when the layer is switched off."""
    if not enabled():
        return [Learned(()) for _ in texts]
    out: list[Learned | None] = [None] * len(texts)
    forms: dict[int, str] = {}
    for index, (text, kept) in enumerate(zip(texts, stored, strict=True)):
        ruled = _ruled_unmasked(text) if text.strip() else ()
        if ruled or not text.strip():
            out[index] = Learned(ruled)
            continue
        form = readable(text, kept)
        if too_short(form):
            out[index] = Learned(())
        else:
            forms[index] = form
    known = {form: _scores[form] for form in forms.values() if form in _scores}
    fresh = [form for form in dict.fromkeys(forms.values()) if form not in known]
    vectors = dict(zip(fresh, embed_readable(fresh), strict=True))
    if fresh:
        scored = shipped_model().scores(np.stack(list(vectors.values())))
        for form, score in zip(fresh, scored.tolist(), strict=True):
            known[form] = score
            _remember_score(form, score)
    threshold = decision_threshold()
    for index, form in forms.items():
        score = known[form]
        reasons = (REASON.format(score=score),) if score >= threshold else ()
        vector = vectors.get(form) if form == stored[index] else None
        out[index] = Learned(reasons, None if vector is None else vector.tolist())
    return [verdict or Learned(()) for verdict in out]


def learned_reasons(text: str) -> tuple[str, ...]:
    """Reasons to refuse `text` found once it is unmasked (see `learned_batch`)."""
    return learned_batch([text], [default_stored(text)])[0].reasons


def _ruled_unmasked(text: str) -> tuple[str, ...]:
    """The rules on the readable form, when unmasking undid a disguise."""
    form = disguise_undone(text)
    if form is None:
        return ()
    seen = "\n".join(views(form))
    return tuple(
        dict.fromkeys(f"injection: {name} (unmasked)" for name, rule in RULES if rule.search(seen))
    )


def too_short(form: str) -> bool:
    """A Latin-script remainder under three words ("WhatsApp" once the number is left out,
    "Edits src/components/Card.tsx") gives the network too little to read: two words' vector
    is their topic, not an order. The rules still judge it."""
    return form.isascii() and len(form.split()) < 3
