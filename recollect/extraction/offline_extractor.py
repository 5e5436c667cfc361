"""Fact extraction without a language model: first-person sentences turned into facts by a
few fixed rules, so the background memory job does visible work offline (demo, tests, air-gapped
trials). It is deliberately naive — it copies instructions into "facts" as a careless model
would — so the validation that follows it has something to catch. Use a real model for real
extraction.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from recollect.extraction.extractor import TranscriptLine
from recollect.extraction.records import ExtractedFact

_SENTENCE = re.compile(r".+?(?:[.!?;](?=\s|$)|$)")
_CLAUSE = re.compile(r",\s+(?:and\s+)?|\s+and\s+|\s+but\s+")
_HEDGE = re.compile(r"\b(?:maybe|might|perhaps|probably|thinking about|not sure)\b", re.I)
_RULES: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(r"\b(?i:i'm|i am|my name is)\s+([A-Z][a-z]+)$"), "Name is {0}", "biographical"),
    (
        re.compile(r"\bmy (e-?mail|phone|address) is (\S+?)[.,]?$", re.I),
        "{0} is {1}",
        "biographical",
    ),
    (re.compile(r"\bemail (\S+@\S+?)[.,]?$", re.I), "Email is {0}", "biographical"),
    (
        re.compile(r"\bi (prefer|like|love|hate|lead|live in|work at|work on) (.+)", re.I),
        "{0} {1}",
        "preference",
    ),
    (
        re.compile(r"\bwe (use|deploy to|run on|moved to|migrated to) (.+)", re.I),
        "Team {0} {1}",
        "technical_stack",
    ),
    (re.compile(r"\bour (\w+(?: \w+)?) (?:is|are) (.+)", re.I), "{0} is {1}", "technical_stack"),
    (
        re.compile(r"\bi(?:'ll| will| want to| plan to)? (learn|switch to|move to) (.+)", re.I),
        "Wants to {0} {1}",
        "goal",
    ),
    (
        re.compile(r"\b(?:please )?(?:forget|ignore) (?:that|about|what i said about) (.+)", re.I),
        "Forget that {0}",
        "biographical",
    ),
    (
        re.compile(r"\b((?:keep|never|always|ignore|don't|do not)\b.+)", re.I),
        "Asks: {0}",
        "preference",
    ),
)


_VERB_SUBJECTS = {"lives in": "location", "works at": "employer"}
"""Verbs that name what the fact is about ("I live in Lisbon": the location)."""


def offline_facts(lines: Sequence[TranscriptLine]) -> list[ExtractedFact]:
    """One candidate per matching user sentence; hedged sentences get a low confidence."""
    facts: list[ExtractedFact] = []
    for line in lines:
        if line.role != "user":
            continue
        for raw in _SENTENCE.findall(line.content):
            sentence = raw.strip()
            for clause in _CLAUSE.split(sentence):
                fact = _match(clause.strip(), line.message_id)
                if fact is not None:
                    facts.append(fact)
    return facts


def _third_person(verb: str) -> str:
    """ "prefer" → "prefers", "deploy to" → "deploys to", "moved to" stays."""
    head, _, rest = verb.partition(" ")
    if not head.endswith("ed"):
        head += "es" if head.endswith(("sh", "ch", "s", "x")) else "s"
    return f"{head} {rest}".strip()


def _subject(template: str, parts: list[str]) -> str | None:
    """What the fact is about, where the sentence says so ("my name", "our frontend")."""
    if template.startswith("Name is"):
        return "name"
    if template == "{0} is {1}" and parts:
        return "_".join(parts[0].lower().split())
    if parts:
        return _VERB_SUBJECTS.get(parts[0].lower())
    return None


def _match(clause: str, message_id: str) -> ExtractedFact | None:
    for pattern, template, category in _RULES:
        found = pattern.search(clause)
        if found is None:
            continue
        parts = [part.strip().rstrip(".!?;") for part in found.groups()]
        if "{0} {1}" in template and category in ("preference", "technical_stack"):
            parts[0] = _third_person(parts[0])
        text = template.format(*parts)
        text = text[0].upper() + text[1:]
        hedged = bool(_HEDGE.search(clause))
        return ExtractedFact(
            text=text,
            category="goal" if hedged else category,
            confidence=0.5 if hedged else 0.9,
            subject=_subject(template, parts),
            source_message_ids=[message_id],
        )
    return None
