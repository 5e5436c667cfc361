"""What a session leaves behind: the structured-output schema of an episode summary."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


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
