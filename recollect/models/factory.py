"""Chat models by name, through `init_chat_model`, with an honest offline fallback.

`OPENAI_API_KEY` or `OPENAI_BASE_URL` set → `openai:gpt-4.1-mini` unless a model is named;
`OPENAI_BASE_URL` alone points the OpenAI client at any compatible server (vLLM, Ollama,
llama.cpp). Neither set → the offline model, which says so in every reply.
"""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Any

from langchain.chat_models import init_chat_model
from langchain_core.language_models import BaseChatModel

DEFAULT_OPENAI_MODEL = "openai:gpt-4.1-mini"
OFFLINE_MODEL = "offline"
_LOCAL_SERVER_KEY = "not-needed"  # compatible servers often ignore the key, the client wants one


def openai_configured() -> bool:
    """Whether a real OpenAI-compatible endpoint is configured."""
    return bool(os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL"))


def resolve_model_name(requested: str = "") -> str:
    """The model a run will use: the requested one, else the environment's default."""
    if requested:
        return requested
    env_model = os.environ.get("RECOLLECT_MODEL", "")
    if env_model:
        return env_model
    return DEFAULT_OPENAI_MODEL if openai_configured() else OFFLINE_MODEL


def describe_model(requested: str = "") -> str:
    """One line for users: which model answers, and where it runs."""
    name = resolve_model_name(requested)
    if name == OFFLINE_MODEL:
        return (
            "model: offline (no OPENAI_API_KEY or OPENAI_BASE_URL set; replies are a "
            "deterministic stand-in that quotes the memory it was given)"
        )
    base_url = os.environ.get("OPENAI_BASE_URL")
    where = f" at {base_url}" if base_url and name.startswith("openai:") else ""
    return f"model: {name}{where}"


def is_anthropic(model: BaseChatModel | str) -> bool:
    """Whether `model` (an instance, or a name as `init_chat_model` takes it) is Anthropic's,
    whose prompt cache is read only at breakpoints the request marks."""
    if isinstance(model, str):
        name = resolve_model_name(model)
        return name.startswith("anthropic:") or name.startswith("claude")
    return "anthropic" in model._llm_type


def chat_model(requested: str = "") -> BaseChatModel:
    """The model for a run; clients are shared per name and endpoint, not built per turn."""
    name = resolve_model_name(requested)
    return _cached_model(name, os.environ.get("OPENAI_BASE_URL", ""), _has_api_key())


def _has_api_key() -> bool:
    return bool(os.environ.get("OPENAI_API_KEY"))


@lru_cache(maxsize=16)
def _cached_model(name: str, base_url: str, has_api_key: bool) -> BaseChatModel:
    if name == OFFLINE_MODEL:
        from recollect.models.offline import OfflineChatModel

        return OfflineChatModel()
    kwargs: dict[str, Any] = {
        "timeout": float(os.environ.get("RECOLLECT_MODEL_TIMEOUT", "60")),
        "max_retries": int(os.environ.get("RECOLLECT_MODEL_MAX_RETRIES", "2")),
    }
    if base_url and name.startswith("openai:"):
        kwargs["base_url"] = base_url
        if not has_api_key:
            kwargs["api_key"] = _LOCAL_SERVER_KEY
    model: BaseChatModel = init_chat_model(name, **kwargs)
    return model
