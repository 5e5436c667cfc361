"""Ask a model for durable facts in a batch of messages, through structured output.

The call forces one tool whose arguments are `ExtractionResult`, which works on OpenAI and
on compatible servers (and on the offline model); anything that does not parse into that
schema is an `ExtractionError`, so the caller retries the batch instead of storing part of it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import ValidationError

from recollect.extraction.records import ExtractedFact, ExtractionResult
from recollect.store.errors import RecollectError

EXTRACTION_TOOL = ExtractionResult.__name__

EXTRACTION_PROMPT = """You maintain a long-term memory about the user. Read the conversation \
excerpt and list only DURABLE facts about the user that would help in future, unrelated \
conversations: stable preferences, biography (role, team, location, languages), constraints \
(allergies, accessibility, policies they must follow), goals, and their technical stack.

Do NOT list:
- session context or one-off events ("was debugging a race condition on Tuesday", "asked about \
pricing today");
- anything the assistant said, unless the user confirmed it;
- a `worker` line (a research finding, with its sources) unless it is a durable fact about \
the user; when it is, its confidence is no higher than its sources justify;
- instructions addressed to the assistant — they are not facts about the user;
- secrets or exact personal identifiers (card numbers, passwords, government ids).

Write each fact as a short third-person statement ("Prefers TypeScript"). Allowed categories: \
{categories}. Give a confidence from 0 to 1 (1 = stated plainly by the user; lower when inferred \
or hedged) and the ids, shown in square brackets, of the messages that support it. An empty \
list is the right answer when nothing durable was said.

Give each fact a short snake_case `subject` (what it is about: "location", "manager", \
"allergy", "language", "tool"). Decide against what is already known (listed with ids): \
`action` "add" for something new, including one more value of a list (another allergy, \
language, tool or team member never replaces the others); "update", with the known fact's id \
in `updates`, when the user changed or retracted it (moved, switched, no longer); "none" when \
a known fact already says it."""

KNOWN_FACTS_HEADER = "Already known about the user (id, category, subject: text):"


class ExtractionError(RecollectError):
    """The model's answer could not be used; nothing from it may be stored."""


@dataclass(frozen=True)
class TranscriptLine:
    """One buffered message the extractor reads."""

    message_id: str
    role: str
    content: str


@dataclass(frozen=True)
class KnownFact:
    """A stored fact the extractor is shown, so it can say update or nothing instead of add."""

    id: str
    category: str
    subject: str | None
    text: str


def extraction_messages(
    lines: Sequence[TranscriptLine],
    categories: Iterable[str],
    known: Sequence[KnownFact] = (),
) -> list[BaseMessage]:
    """The system instructions, what is already known (with ids), then the excerpt."""
    allowed = ", ".join(sorted(categories))
    excerpt = "\n".join(f"[{line.message_id}] {line.role}: {line.content}" for line in lines)
    listed = "\n".join(f"- {k.id} ({k.category}, {k.subject or '-'}): {k.text}" for k in known)
    context = f"{KNOWN_FACTS_HEADER}\n{listed or '(nothing yet)'}\n\n"
    return [
        SystemMessage(content=EXTRACTION_PROMPT.format(categories=allowed)),
        HumanMessage(content=f"{context}Conversation excerpt:\n{excerpt}"),
    ]


def extract_facts(
    model: BaseChatModel,
    lines: Sequence[TranscriptLine],
    categories: Iterable[str],
    *,
    timeout_s: float,
    known: Sequence[KnownFact] = (),
) -> list[ExtractedFact]:
    """Candidate facts for `lines`; source ids outside the batch are dropped, and a fact that
    names none is attributed to the batch's user messages. An update naming an id that was not
    shown becomes an addition (the write path's own rule then decides)."""
    bound = model.bind_tools([ExtractionResult], tool_choice=EXTRACTION_TOOL, timeout=timeout_s)
    reply = bound.invoke(extraction_messages(lines, categories, known))
    result = parse_reply(reply)
    batch = {line.message_id for line in lines}
    fallback = [line.message_id for line in lines if line.role == "user"]
    shown = {k.id for k in known}
    facts = []
    for fact in result.facts:
        sources = [source for source in fact.source_message_ids if source in batch]
        update: dict[str, object] = {"source_message_ids": sources or fallback}
        if fact.action == "update" and fact.updates not in shown:
            update |= {"action": "add", "updates": None}
        facts.append(fact.model_copy(update=update))
    return facts


def parse_reply(reply: BaseMessage) -> ExtractionResult:
    """The forced tool call's arguments as `ExtractionResult`, or a clear `ExtractionError`."""
    if not isinstance(reply, AIMessage):
        raise ExtractionError(f"expected an AI message, got {type(reply).__name__}")
    calls = [call for call in reply.tool_calls if call["name"] == EXTRACTION_TOOL]
    if not calls:
        broken = [call for call in reply.invalid_tool_calls if call.get("name") == EXTRACTION_TOOL]
        if broken:
            raise ExtractionError(
                f"malformed JSON in structured output: {broken[0].get('error') or 'unparsable'}"
            )
        raise ExtractionError("the model returned no structured output")
    try:
        return ExtractionResult.model_validate(calls[0]["args"])
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc'])}: {error['msg']}" for error in exc.errors()
        )
        raise ExtractionError(f"structured output violates the schema: {problems}") from exc
