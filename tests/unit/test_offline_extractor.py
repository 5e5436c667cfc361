"""The offline extractor turns first-person sentences into candidate facts, naively."""

from __future__ import annotations

from recollect.extraction.extractor import TranscriptLine
from recollect.extraction.offline_extractor import offline_facts
from recollect.longterm.cues import only_retracts


def _facts(text: str, role: str = "user") -> list[tuple[str, str, float]]:
    return [
        (f.text, f.category, f.confidence)
        for f in offline_facts([TranscriptLine("m1", role, text)])
    ]


def test_first_person_sentences_become_third_person_facts() -> None:
    assert _facts("I prefer TypeScript. Our frontend is React 16 and we deploy to GCP.") == [
        ("Prefers TypeScript", "preference", 0.9),
        ("Frontend is React 16", "technical_stack", 0.9),
        ("Team deploys to GCP", "technical_stack", 0.9),
    ]


def test_hedged_statements_get_low_confidence_and_assistant_text_is_ignored() -> None:
    assert _facts("Maybe I'll learn Rust next year.") == [
        ("Wants to learn Rust next year", "goal", 0.5)
    ]
    assert _facts("I prefer TypeScript.", role="assistant") == []


def test_sources_point_at_the_message() -> None:
    [fact] = offline_facts([TranscriptLine("msg-7", "user", "My email is a@b.co")])
    assert fact.source_message_ids == ["msg-7"]
    assert fact.text == "Email is a@b.co"  # redaction happens after extraction, in validation


def test_where_one_lives_and_works_is_inflected_once_and_given_its_subject() -> None:
    facts = offline_facts([TranscriptLine("m1", "user", "I live in Lisbon and I work at Feedzai")])
    assert [(f.text, f.subject) for f in facts] == [
        ("Lives in Lisbon", "location"),
        ("Works at Feedzai", "employer"),
    ]


def test_a_retraction_is_passed_on_as_one() -> None:
    [fact] = offline_facts([TranscriptLine("m1", "user", "Please forget that I have a cat.")])
    assert fact.text == "Forget that I have a cat"
    assert only_retracts(fact.text)
