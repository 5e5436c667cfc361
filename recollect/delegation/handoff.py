"""Distil a worker's report into the handoff the orchestrator keeps.

A report's citations are checked against the ids the worker was actually shown (its brief and
its own tool results): a fact citing nothing real loses those citations, and a fact left with
no source at all becomes an open question rather than a finding. The summary is capped, so
however long a worker ran, its handoff costs the orchestrator a bounded number of tokens.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from recollect.delegation.brief import MEMORY_PREFIX
from recollect.delegation.records import Handoff, HandoffFact, WorkerReport
from recollect.history.tokens import text_tokens
from recollect.history.truncation import truncate_text

_SPACE = re.compile(r"\s+")
_NUMBER = re.compile(r"\d(?:[\d,.]*\d)?")
MAX_FACTS = 12
MAX_QUESTIONS = 5


def fact_key(text: str) -> str:
    """Two facts are the same when they differ only in case, spacing or a final stop."""
    return _SPACE.sub(" ", text).strip().rstrip(".").casefold()


def distill(
    report: WorkerReport,
    sources: Mapping[str, str],
    *,
    max_tokens: int,
    fallback_summary: str = "",
) -> Handoff:
    """The handoff for `report`, at most `max_tokens` when rendered; `sources` maps each id
    the worker saw to what it stands for.

    The summary takes at most half the budget; facts follow while they fit (a fact is kept or
    dropped whole, never cut, so a number cannot lose a digit), then open questions.
    `fallback_summary` (the worker's last reply) stands in for an empty summary.
    """
    if max_tokens < 8:
        raise ValueError(f"a handoff needs at least 8 tokens, got {max_tokens}")
    facts: list[HandoffFact] = []
    questions = [q.strip() for q in report.open_questions if q.strip()]
    seen: dict[str, int] = {}
    dropped = 0
    for reported in report.facts:
        text = _SPACE.sub(" ", reported.text).strip()
        if not text:
            continue
        cited = [s.strip().strip("[]") for s in reported.sources]
        known = tuple(dict.fromkeys(sources[s] for s in cited if s in sources))
        dropped += sum(1 for s in cited if s not in sources)
        if not known:
            questions.append(f"Unsourced: {text}")
            continue
        key = fact_key(text)
        learned = any(not s.startswith(MEMORY_PREFIX) for s in known)
        if key in seen:  # the same fact twice: one fact, every source
            old = facts[seen[key]]
            facts[seen[key]] = HandoffFact(
                text=old.text,
                sources=tuple(dict.fromkeys((*old.sources, *known))),
                learned=old.learned or learned,
            )
            continue
        seen[key] = len(facts)
        facts.append(HandoffFact(text=text, sources=known, learned=learned))
    summary = report.summary.strip() or fallback_summary.strip()
    summary = cap_text(summary, max_tokens // 2)
    questions = [*unbacked_numbers(summary, facts), *questions]
    kept = Handoff(summary=summary, dropped_sources=dropped)
    for fact in facts[:MAX_FACTS]:
        grown = kept.model_copy(update={"facts": (*kept.facts, fact)})
        if handoff_tokens(grown) <= max_tokens:
            kept = grown
    for question in list(dict.fromkeys(questions))[:MAX_QUESTIONS]:
        grown = kept.model_copy(update={"open_questions": (*kept.open_questions, question)})
        if handoff_tokens(grown) <= max_tokens:
            kept = grown
    return kept


def cap_text(text: str, max_tokens: int) -> str:
    """Cut with a marker where the budget allows one; below that, a plain cut."""
    cut = truncate_text(text, max_tokens) if text else ""
    return (
        cut if text_tokens(cut) <= max_tokens else text[:max_tokens]
    )  # one char, one token at most


def unbacked_numbers(summary: str, facts: list[HandoffFact]) -> list[str]:
    """A number stated only in the prose summary is flagged: numbers must travel as sourced
    facts, where the next agent can check them, not only inside a paraphrase."""
    carried = {n.replace(",", "") for f in facts for n in _NUMBER.findall(f.text)}
    loose = [n for n in _NUMBER.findall(summary) if n.replace(",", "") not in carried]
    return [f"Number only in the summary, unsourced: {n}" for n in dict.fromkeys(loose)]


def handoff_tokens(handoff: Handoff) -> int:
    """What the handoff costs in the orchestrator's context, rendered as it will be."""
    return text_tokens(render_handoff(handoff))


def render_handoff(handoff: Handoff) -> str:
    """Summary, then one line per fact with its sources, then the open questions."""
    lines = [handoff.summary]
    lines += [f"- {f.text} [{', '.join(f.sources)}]" for f in handoff.facts]
    lines += [f"? {q}" for q in handoff.open_questions]
    return "\n".join(line for line in lines if line)
