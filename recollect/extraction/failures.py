"""Failures that another attempt cannot fix, and what to set instead.

Missing credentials, a refused key and an unknown model fail the same way on every retry;
retrying them only fills logs. The worker parks such a job at once with one line saying what
to change, and `recollect memory jobs --retry` puts it back once the configuration changed.
"""

from __future__ import annotations

RETRY_HINT = "then run `recollect memory jobs --retry`"
_CREDENTIAL_WORDS = ("api_key", "api key", "credentials")


def unfixable(exc: BaseException, model: str) -> str | None:
    """One line saying what to set, when `exc` will recur on every retry; None otherwise."""
    kinds = {cls.__name__ for cls in type(exc).__mro__}  # SDK classes, or wrappers of them
    text = str(exc).lower()
    if "AuthenticationError" in kinds:
        return f"the provider refused the API key for {model} (401): set a valid key, {_key(model)}"
    if "PermissionDeniedError" in kinds:
        return f"the API key may not use {model} (403): set a key that may, {_key(model)}"
    if "NotFoundError" in kinds or "model_not_found" in text:
        return (
            f"the provider does not know the model {model}: set RECOLLECT_MODEL to one it serves, "
            f"{RETRY_HINT}"
        )
    if isinstance(exc, ImportError) or "unable to infer model provider" in text:
        return (
            f"no chat model provider for {model!r}: set RECOLLECT_MODEL to provider:model with "
            f"its package installed (e.g. openai:gpt-4.1-mini), {RETRY_HINT}"
        )
    if "unsupported" in text and "provider" in text:
        return f"unknown model provider in {model!r}: set RECOLLECT_MODEL, {RETRY_HINT}"
    if kinds & {"OpenAIError", "ValueError", "ValidationError"} and any(
        word in text for word in _CREDENTIAL_WORDS
    ):
        return f"no credentials for {model}: {_key(model)}"
    return None


def _key(model: str) -> str:
    """Which variable carries the key for the model's provider."""
    provider = model.split(":", 1)[0] if ":" in model else "openai"
    if provider == "openai":
        return "set OPENAI_API_KEY (or OPENAI_BASE_URL for a compatible server), " + RETRY_HINT
    return f"set {provider.upper()}_API_KEY, {RETRY_HINT}"
