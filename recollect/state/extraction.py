"""What the extraction model must return: the structured-output schema of candidate facts.

Kept loose where the model may wander (category is free text) so an off-list category is
rejected by validation with a reason, rather than failing the whole batch; kept strict where
a wrong value means the output is broken (confidence outside 0..1, missing text).
"""

from __future__ import annotations

from typing import Any, TypedDict

from pydantic import BaseModel, ConfigDict, Field, field_validator


class ExtractedFact(BaseModel):
    """One durable fact about the user, with the messages that support it."""

    model_config = ConfigDict(extra="ignore")

    text: str = Field(
        min_length=1,
        description="The fact as a short third-person statement, e.g. 'Prefers TypeScript'.",
    )
    category: str = Field(description="One of the allowed categories listed in the prompt.")
    subject: str | None = Field(
        default=None,
        description="A short snake_case key for what the fact is about, e.g. 'frontend_framework'.",
    )
    confidence: float = Field(ge=0.0, le=1.0, description="0..1: how sure the user stated it.")
    source_message_ids: list[str] = Field(
        default_factory=list, description="Ids (in square brackets) of the supporting messages."
    )

    @field_validator("category")
    @classmethod
    def _fold_category(cls, value: str) -> str:
        """Models write "Preference" or "technical stack"; the allow-list decides the rest."""
        return "_".join(value.strip().lower().replace("-", " ").split())


class ExtractionResult(BaseModel):
    """Facts worth remembering across conversations; an empty list is a good answer."""

    facts: list[ExtractedFact] = Field(default_factory=list)


class MemoryRunInput(TypedDict):
    """What the `memory` graph is asked: extract the queued turns of this conversation."""

    thread_id: str


class MemoryRunState(MemoryRunInput, total=False):
    """The `memory` graph's state: its input, and what each job it ran did."""

    outcomes: list[dict[str, Any]]
