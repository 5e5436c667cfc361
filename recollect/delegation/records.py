"""What a worker is asked to return, and what survives the handoff.

Facts and numbers travel as fields with their sources, never only inside the prose summary: a
summary is lossy, and a paraphrase error at a handoff has no human to catch it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ReportedFact(BaseModel):
    """One finding, with the ids of what it was read from."""

    text: str = Field(description="One self-contained statement, numbers written out exactly.")
    sources: list[str] = Field(
        default_factory=list,
        description="Ids, as shown in square brackets, of the memories, blackboard keys or "
        "tool results this fact comes from.",
    )


class WorkerReport(BaseModel):
    """The structured answer a worker's model is forced to give when its subtask is done."""

    summary: str = Field(description="Two or three sentences: what was found for the subtask.")
    facts: list[ReportedFact] = Field(default_factory=list)
    open_questions: list[str] = Field(
        default_factory=list, description="What could not be settled from the material given."
    )


class HandoffFact(BaseModel):
    """A fact as it leaves a worker: sources checked against what the worker was shown."""

    model_config = ConfigDict(frozen=True)

    text: str
    sources: tuple[str, ...]
    learned: bool
    """True when a source is not long-term memory (a tool result, a blackboard entry): only
    such facts are new, and only they are offered to extraction."""


class Handoff(BaseModel):
    """The distilled result: all the orchestrator ever sees of a worker's work."""

    model_config = ConfigDict(frozen=True)

    summary: str
    facts: tuple[HandoffFact, ...] = ()
    open_questions: tuple[str, ...] = ()
    dropped_sources: int = 0
    """Cited ids the worker was never shown (invented or mistyped); they are removed."""
