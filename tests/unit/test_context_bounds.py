"""What a served caller may set in `context`: the allow-list and the caps, as one-line refusals."""

from __future__ import annotations

import pytest

from recollect.auth.context_bounds import WHOLE_CAPS, context_refusal


def test_the_default_and_listed_models_pass_and_others_are_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RECOLLECT_ALLOWED_MODELS", "openai:gpt-4.1-nano, openai:gpt-4.1")
    for model in (None, "", "offline", "openai:gpt-4.1-nano", "openai:gpt-4.1"):
        assert context_refusal({"model": model}) is None, model
    refused = context_refusal({"model": "anthropic:claude-opus-4"})
    assert refused is not None
    assert refused.startswith("context.model 'anthropic:claude-opus-4' is not allowed here")


def test_caps_and_types() -> None:
    for name, cap in WHOLE_CAPS.items():
        assert context_refusal({name: cap}) is None
        for bad in (cap + 1, 0, -1, "10", 1.5, True):
            assert (
                context_refusal({name: bad})
                == f"context.{name} must be a whole number from 1 to {cap}"
            )
    assert context_refusal({"min_confidence": 0.5, "extract_after_idle_s": 3600}) is None
    assert context_refusal({"min_confidence": float("nan")}) is not None
    assert context_refusal({"extract_after_idle_s": float("inf")}) is not None
    assert context_refusal({"system_prompt": "x" * 8001}) is not None
    assert context_refusal("not a mapping") is None
    assert context_refusal({"context_tokens": None, "min_confidence": None}) is None
