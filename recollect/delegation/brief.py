"""A worker's context, built to a per-worker token budget.

Each worker gets the blackboard keys it was given, its own private notes, and its own recall
from long-term memory with its subtask as the query — never the orchestrator's history or
another worker's notes. The budget is per worker, not a total split across workers: a plan
with eight subtasks does not starve each one to an eighth.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from recollect.history.tokens import text_tokens
from recollect.history.truncation import truncate_text
from recollect.longterm.records import Recollection

MEMORY_PREFIX = "memory:"
"""Source ids of long-term memories; facts cited only from these are not new."""
BLACKBOARD_PREFIX = "board:"
NOTE_PREFIX = "note:"
_LINE_FRAMING = 1


@dataclass(frozen=True)
class Section:
    """A `## heading` block of the worker's system prompt."""

    heading: str
    lines: tuple[str, ...]

    def render(self) -> str:
        return f"## {self.heading}\n" + "\n".join(self.lines)


@dataclass(frozen=True)
class WorkerBrief:
    """What one worker starts with, the ids it may cite, and what each part cost.

    `sources` maps each id shown in the brief (`m1`, `board:deadline`, `note:plan`) to the
    source it stands for (`memory:<fact id>`, ...); short ids keep the citations cheap."""

    sections: tuple[Section, ...]
    sources: Mapping[str, str]
    tokens: Mapping[str, int] = field(default_factory=dict)

    def render(self) -> str:
        return "\n\n".join(section.render() for section in self.sections if section.lines)

    @property
    def total(self) -> int:
        return sum(self.tokens.values())


Entry = tuple[str, str, str]
"""(id shown to the worker, source it stands for, text)."""


def _fit(
    heading: str, entries: Sequence[Entry], budget: int, max_line_tokens: int
) -> tuple[list[str], dict[str, str], int]:
    """Lines `- [id] text` in order while they fit; an over-long value is cut, not dropped.
    The section's heading (and the blank line before it) is charged with its first line."""
    lines: list[str] = []
    ids: dict[str, str] = {}
    used = 0
    for shown, source, text in entries:
        line = f"- [{shown}] {truncate_text(text, max_line_tokens)}"
        cost = text_tokens(line) + _LINE_FRAMING
        if not lines:
            cost += text_tokens(f"## {heading}") + _LINE_FRAMING * 2
        if used + cost > budget:
            continue
        lines.append(line)
        ids[shown] = source
        used += cost
    return lines, ids, used


def memory_entries(found: Recollection) -> list[Entry]:
    """Profile first, then facts and episodes best first, each with a short citable id."""
    pairs = [(f"{MEMORY_PREFIX}profile:{p.key}", f"{p.key}: {p.value}") for p in found.profile]
    ranked = [(r.score, f"{MEMORY_PREFIX}{r.fact.id}", r.fact.text) for r in found.facts]
    ranked += [(e.score, f"{MEMORY_PREFIX}{e.id}", e.summary) for e in found.episodes]
    pairs += [(source, text) for _, source, text in sorted(ranked, key=lambda item: -item[0])]
    return [(f"m{n}", source, text) for n, (source, text) in enumerate(pairs, start=1)]


Recall = Callable[[int], Recollection | None]
"""Long-term recall for this worker's task, given the tokens still free (None: unavailable)."""

MAX_BLACKBOARD_KEYS = 64


class BlackboardError(ValueError):
    """A blackboard no worker's brief could hold."""


def check_blackboard(board: Mapping[str, str], per_worker_tokens: int) -> None:
    """Refuse, before any work, a blackboard with too many keys or a value no brief can hold."""
    if len(board) > MAX_BLACKBOARD_KEYS:
        raise BlackboardError(
            f"the blackboard has {len(board)} keys; at most {MAX_BLACKBOARD_KEYS} are allowed"
        )
    for key, value in board.items():
        if not isinstance(key, str) or not key.strip() or not isinstance(value, str):
            raise BlackboardError(
                f"blackboard entries must be non-empty text keys with text values: {key!r}"
            )
        if text_tokens(value) > per_worker_tokens:
            raise BlackboardError(
                f"blackboard key {key!r} holds {text_tokens(value)} tokens, more than a worker's "
                f"whole budget ({per_worker_tokens})"
            )


def build_brief(
    task: str,
    *,
    budget: int,
    blackboard: Mapping[str, str],
    notes: Mapping[str, str],
    recall: Recall | None,
) -> WorkerBrief:
    """The task is charged first (it is always sent whole); then the blackboard (the shared
    ground truth), the worker's own notes, and last its recall with what is left. The parts
    after the task never exceed `budget` together."""
    if budget < 1:
        raise ValueError(f"a worker's budget must be a positive number of tokens, got {budget}")
    tokens = {"task": text_tokens(task)}
    left = max(budget - tokens["task"], 0)
    line_cap = max(left // 3, 16)
    sections: list[Section] = []
    sources: dict[str, str] = {}
    shared: list[Entry] = [
        (f"{BLACKBOARD_PREFIX}{k}", f"{BLACKBOARD_PREFIX}{k}", v) for k, v in blackboard.items()
    ]
    own: list[Entry] = [(f"{NOTE_PREFIX}{k}", f"{NOTE_PREFIX}{k}", v) for k, v in notes.items()]
    for heading, key, entries in (
        ("Blackboard", "blackboard", shared),
        ("Your notes", "notes", own),
    ):
        lines, ids, used = _fit(heading, entries, left, line_cap)
        sections.append(Section(heading, tuple(lines)))
        sources.update(ids)
        tokens[key] = used
        left -= used
    found = recall(left) if recall is not None and left > 0 else None
    recalled = "Recalled memories"
    lines, ids, used = _fit(recalled, memory_entries(found) if found else [], left, line_cap)
    sections.append(Section(recalled, tuple(lines)))
    sources.update(ids)
    tokens["recalled"] = used
    return WorkerBrief(tuple(sections), sources, tokens)
