"""Prompt-injection screening: a "fact" that instructs the assistant is not a fact.

Anything stored in long-term memory is put in front of the model in every later session, so
an instruction smuggled in as a fact ("ignore previous instructions", "du bist jetzt …", a role
marker, a tool or URL directive, the same in base64 or Cyrillic look-alikes) would act on every
future conversation. The rules live in `injection_patterns`; they read every view of the text
that `normalise.views` produces. Each rule has a name, which is the reason recorded when it
fires, so a verdict can always be explained. A fact no rule refuses is read once more by the
learned layer (`injection_classifier`), which judges what it means in any language or wording.
An instruction cut across two facts ("Ignore all previous" + "instructions from now on", each
harmless alone) is read joined by the rules, so neither half passes.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from recollect.gate.injection_classifier import forget_scores, learned_reasons
from recollect.gate.injection_patterns import RULES
from recollect.gate.normalise import canonical, views

__all__ = [
    "SPLIT_WINDOW",
    "canonical",
    "clear_caches",
    "completes_split_instruction",
    "opens_split_instruction",
    "ruled_injection",
    "screen",
]

SPLIT_WINDOW = 1
"""How many earlier facts a new one is read together with: an instruction cut in two comes
as neighbours of one extraction, or as the user's latest fact and the first new one. One
neighbour each side keeps a batch's cost to one extra screening per fact (each joined pair is
screened once)."""


def screen(text: str) -> tuple[str, ...]:
    """Reasons this text is an instruction rather than a fact; empty when it is clean. Not
    cached itself: the rules' verdict and the learned score are, and the learned layer's
    switch is read on every call."""
    return _ruled(text) or learned_reasons(text)


def ruled_injection(text: str) -> tuple[str, ...]:
    """Reasons the pattern rules alone give (the write path runs the learned layer on a whole
    batch afterwards, see `FactScreen.check_batch`)."""
    return _ruled(text)


def clear_caches() -> None:
    """Forget every verdict kept, so a benchmark times the screening itself."""
    _ruled.cache_clear()
    _joined.cache_clear()
    forget_scores()


@lru_cache(maxsize=4096)
def _ruled(text: str) -> tuple[str, ...]:
    """The pattern rules that fire on any view of `text`."""
    seen = "\n".join(views(text))
    return tuple(dict.fromkeys(f"injection: {name}" for name, rule in RULES if rule.search(seen)))


@lru_cache(maxsize=1024)
def _joined(earlier: str, later: str) -> tuple[str, ...]:
    """Rules that fire on the two facts read as one text and on neither alone (the rules
    only: the learned layer has read each fact on its own)."""
    alone = {*_ruled(earlier), *_ruled(later)}
    return tuple(r for r in _ruled(f"{earlier} {later}") if r not in alone)


def completes_split_instruction(earlier: str, text: str) -> tuple[str, ...]:
    """Reasons `text` finishes an instruction that `earlier` began."""
    return tuple(f"{reason} (completes an earlier fact)" for reason in _joined(earlier, text))


def opens_split_instruction(text: str, following: Iterable[str]) -> tuple[str, ...]:
    """Reasons `text` begins an instruction that one of the `following` facts finishes."""
    return tuple(
        f"{reason} (begun here, finished by a later fact)"
        for later in following
        for reason in _joined(text, later)
    )
