"""Bearer tokens mapped to identities, from `RECOLLECT_API_KEYS`.

The variable is a JSON object `{"<token>": "<org>/<user>[:perm,perm]"}`. Tokens are kept only
as SHA-256 digests and looked up by digest, so a comparison never leaks how much of a guess
was right and a memory dump holds no usable key. This is for local use, tests and small
deployments; production swaps `authenticate_bearer` for a JWT/OIDC check (see
`docs/deploying.md`) and keeps everything downstream of the `Identity` it returns.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping

from recollect.auth.identity import Identity
from recollect.store.errors import ConfigurationError, RecollectError

API_KEYS_ENV = "RECOLLECT_API_KEYS"
MIN_TOKEN_LENGTH = 16
BEARER = "bearer "


class AuthenticationError(RecollectError):
    """No credentials, or credentials that match no identity."""


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def load_api_keys(raw: str | None = None) -> dict[str, Identity]:
    """Digest → identity, from `raw` or the environment; an unusable value is refused whole."""
    text = os.environ.get(API_KEYS_ENV, "") if raw is None else raw
    if not text.strip():
        return {}
    try:
        entries = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigurationError(f"{API_KEYS_ENV} is not JSON: {exc.msg}") from exc
    if not isinstance(entries, Mapping):
        raise ConfigurationError(f'{API_KEYS_ENV} must be a JSON object {{"token": "org/user"}}')
    keys: dict[str, Identity] = {}
    for token, who in entries.items():
        if not isinstance(who, str) or len(token) < MIN_TOKEN_LENGTH:
            raise ConfigurationError(
                f"{API_KEYS_ENV}: every token needs at least {MIN_TOKEN_LENGTH} characters and "
                "an identity string"
            )
        try:
            keys[_digest(token)] = Identity.parse(who)
        except ValueError as exc:
            raise ConfigurationError(f"{API_KEYS_ENV}: {exc}") from exc
    return keys


def authenticate_bearer(authorization: str | None, keys: Mapping[str, Identity]) -> Identity:
    """The identity an `Authorization: Bearer <token>` header names, or `AuthenticationError`."""
    if not keys:
        raise AuthenticationError(f"no API keys are configured: set {API_KEYS_ENV}")
    if not authorization or not authorization.lower().startswith(BEARER):
        raise AuthenticationError("missing credentials: send Authorization: Bearer <token>")
    identity = keys.get(_digest(authorization[len(BEARER) :].strip()))
    if identity is None:
        raise AuthenticationError("unknown API key")
    return identity
