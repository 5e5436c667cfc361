"""Prompt-injection screening: a "fact" that instructs the assistant is not a fact.

Anything stored in long-term memory is put in front of the model in every later session, so
an instruction smuggled in as a fact ("ignore previous instructions", "du bist jetzt …", a role
marker, a tool or URL directive, the same in base64 or Cyrillic look-alikes) would act on every
future conversation. The rules live in `injection_patterns`; they read every view of the text
that `normalise.views` produces. Each rule has a name, which is the reason recorded when it
fires, so a verdict can always be explained. A fact no rule refuses is read once more by the
learned layer (`injection_classifier`), which judges what it means in any language or wording.
"""

from __future__ import annotations

from recollect.extraction.injection_classifier import learned_reasons
from recollect.extraction.injection_patterns import RULES
from recollect.extraction.normalise import canonical, views

__all__ = ["canonical", "screen"]


def screen(text: str) -> tuple[str, ...]:
    """Reasons this text is an instruction rather than a fact; empty when it is clean."""
    seen = "\n".join(views(text))
    ruled = tuple(dict.fromkeys(f"injection: {name}" for name, rule in RULES if rule.search(seen)))
    return ruled or learned_reasons(text)
