"""The write path's gate on a labelled corpus: no raw PII passes, no instruction is accepted,
and look-alikes are kept exactly as written."""

from __future__ import annotations

import pytest

from recollect.extraction.validation import (
    FactScreen,
    ValidationPolicy,
    dedup_key,
    parse_categories,
)
from recollect.gate.redaction import compile_patterns, iban_valid, luhn_valid, redact
from tests.support.fact_corpus import BENIGN, INJECTIONS, PII


def test_corpus_figures() -> None:
    assert len(PII) >= 50
    assert len(INJECTIONS) >= 30
    leaked = [(text, raw) for text, raw in PII if raw in FactScreen().check(text).text]
    accepted_injections = [text for text in INJECTIONS if FactScreen().check(text).accepted]
    rejected_benign = [
        (text, verdict.reasons)
        for text in BENIGN
        if not (verdict := FactScreen().check(text)).accepted or verdict.text != text
    ]
    print(
        f"\ncorpus: {len(PII)} PII strings, {len(leaked)} leaked; "
        f"{len(INJECTIONS)} injections, {len(accepted_injections)} accepted; "
        f"{len(BENIGN)} benign look-alikes, {len(BENIGN) - len(rejected_benign)} kept unchanged"
    )
    assert leaked == []
    assert accepted_injections == []
    assert rejected_benign == []


@pytest.mark.parametrize("text", INJECTIONS)
def test_every_injection_is_rejected_with_a_reason(text: str) -> None:
    verdict = FactScreen().check(text)
    assert not verdict.accepted
    assert any(reason.startswith("injection: ") for reason in verdict.reasons)


def test_redaction_keeps_the_fact_and_names_what_it_removed() -> None:
    verdict = FactScreen().check("Email is dana@example.com")
    assert verdict.accepted
    assert verdict.text == "Email is [EMAIL]"
    assert verdict.reasons == ("redacted: email",)


def test_checksums_decide_cards_and_ibans() -> None:
    assert luhn_valid("4111111111111111")
    assert not luhn_valid("4111111111111112")
    assert iban_valid("GB82 WEST 1234 5698 7654 32")
    assert not iban_valid("GB83 WEST 1234 5698 7654 32")
    assert redact("Paid with 4111 1111 1111 1112 today").kinds == ()
    assert redact("Paid with 4111 1111 1111 1111 today").kinds == ("card",)
    assert redact("Ticket 4111 1111 1111 1111 closed").kinds == ()  # called a reference


def test_operator_patterns_and_allow_list() -> None:
    policy = ValidationPolicy(
        extra_patterns=compile_patterns({"employee_id": r"\bEMP-\d{6}\b"}),
        allow_pii=frozenset({"email"}),
    )
    verdict = FactScreen(policy).check("Badge EMP-204816, email ana@example.com")
    assert verdict.text == "Badge [EMPLOYEE_ID], email ana@example.com"
    with pytest.raises(ValueError, match="employee_id"):
        compile_patterns({"employee_id": "EMP-("})


def test_case_and_punctuation_do_not_make_a_fact_new() -> None:
    screen = FactScreen()
    assert screen.check("Uses Python", "technical_stack").accepted
    second = screen.check("uses  python.", "technical_stack")
    assert not second.accepted
    assert second.reasons == ("duplicate: already remembered",)
    assert dedup_key("Uses Python!") == dedup_key("uses python")


def test_known_keys_reject_what_the_user_already_has() -> None:
    screen = FactScreen(known_keys={dedup_key("Prefers TypeScript")})
    assert not screen.check("prefers typescript", "preference").accepted


def test_size_caps_per_fact_and_per_category() -> None:
    screen = FactScreen(ValidationPolicy(max_fact_chars=40, max_per_category=2))
    assert not screen.check("Likes " + "very " * 20 + "long facts").accepted
    verdicts = [screen.check(f"Likes fruit number {n}", "preference") for n in range(3)]
    assert [v.accepted for v in verdicts] == [True, True, False]
    assert verdicts[2].reasons[0].startswith("category cap")
    assert screen.check("Uses Go", "technical_stack").accepted


def test_categories_come_from_the_allow_list() -> None:
    screen = FactScreen(ValidationPolicy(categories=parse_categories("preference,goal")))
    verdict = screen.check("Uses Go", "technical_stack")
    assert not verdict.accepted
    assert "category not allowed" in verdict.reasons[0]
    with pytest.raises(ValueError, match="unknown categories"):
        parse_categories("preference,hobbies")


def test_environment_configures_the_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECOLLECT_REDACT_PATTERNS", '{"order_ref": "T-\\\\d{4}"}')
    monkeypatch.setenv("RECOLLECT_MAX_FACT_CHARS", "50")
    policy = ValidationPolicy.from_env()
    assert policy.max_fact_chars == 50
    assert FactScreen(policy).check("Opened T-1234").text == "Opened [ORDER_REF]"
    monkeypatch.setenv("RECOLLECT_REDACT_PATTERNS", "not json")
    with pytest.raises(ValueError, match="JSON object"):
        ValidationPolicy.from_env()


def test_blank_and_placeholder_only_candidates_are_rejected() -> None:
    assert not FactScreen().check("   ").accepted
    assert not FactScreen().check("dana@example.com").accepted


def test_extracted_categories_are_folded_before_the_allow_list() -> None:
    from recollect.extraction.records import ExtractedFact

    fact = ExtractedFact(text="Uses Go", category=" Technical Stack ", confidence=0.9)
    assert fact.category == "technical_stack"
    assert FactScreen().check(fact.text, fact.category).accepted
