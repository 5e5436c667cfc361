"""What the models behind extraction must return: candidate facts and episode summaries.

Kept loose where the model may wander (category is free text) so an off-list category is
rejected by validation with a reason, rather than failing the whole batch; kept strict where
a wrong value means the output is broken (confidence outside 0..1, missing text).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

WORKER_ROLE = "worker"
"""The role of a buffered line that is a delegated worker's finding (with its sources), not
something the user or the assistant said."""


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
    action: str = Field(
        default="add",
        description=(
            "'add' for a new fact (also one more value of a list, e.g. another allergy); "
            "'update' when it replaces a known fact (give its id in `updates`); 'none' when a "
            "known fact already says it."
        ),
    )
    updates: str | None = Field(
        default=None, description="With action 'update': the id of the known fact it replaces."
    )

    @field_validator("action")
    @classmethod
    def _fold_action(cls, value: str) -> str:
        """Anything but a clear update or no-op is an addition: adding loses nothing."""
        folded = value.strip().lower()
        return folded if folded in ("update", "none") else "add"

    @field_validator("category")
    @classmethod
    def _fold_category(cls, value: str) -> str:
        """Models write "Preference" or "technical stack"; the allow-list decides the rest."""
        return "_".join(value.strip().lower().replace("-", " ").split())


class ExtractionResult(BaseModel):
    """Facts worth remembering across conversations; an empty list is a good answer."""

    facts: list[ExtractedFact] = Field(default_factory=list)


class EpisodeSummary(BaseModel):
    """A session in a few lines: recalled later as "what did we find out about X?"."""

    model_config = ConfigDict(extra="ignore")

    topic: str = Field(min_length=1, max_length=300, description="What the session was about.")
    findings: list[str] = Field(
        default_factory=list, max_length=10, description="What was learned or decided."
    )
    outcome: str = Field(default="", max_length=600, description="How the session ended.")
    pending: list[str] = Field(
        default_factory=list, max_length=10, description="What was left to do next time."
    )

    def as_text(self, date: str) -> str:
        """The episode as stored and searched: one paragraph with its date."""
        parts = [f"Session on {date} about {self.topic.strip().rstrip('.')}."]
        if self.findings:
            parts.append(
                "Findings: " + "; ".join(f.strip().rstrip(".") for f in self.findings) + "."
            )
        if self.outcome.strip():
            parts.append(f"Outcome: {self.outcome.strip().rstrip('.')}.")
        if self.pending:
            parts.append("Pending: " + "; ".join(p.strip().rstrip(".") for p in self.pending) + ".")
        return " ".join(parts)
