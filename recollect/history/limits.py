"""Limits on what one message may carry, checked before any work is done on it.

A 10 MB paste must not reach the embedder, the model or the checkpoint: it is refused at the
boundary (CLI, graph entry) with one line that says the limit and how to change it.
"""

from __future__ import annotations

import os
from typing import Any

from recollect.history.tokens import block_text, is_text_block
from recollect.store.errors import ConfigurationError, RecollectError
from recollect.store.storable import unstorable

MAX_MESSAGE_CHARS_ENV = "RECOLLECT_MAX_MESSAGE_CHARS"
DEFAULT_MAX_MESSAGE_CHARS = 32_000
"""About 8,000 English tokens; larger input belongs in a file or a tool, not one message."""
MAX_MESSAGE_BLOCKS = 16
"""Images, files and other non-text blocks one message may carry."""


class MessageRefusedError(RecollectError, ValueError):
    """A message refused at the door; nothing was stored or sent."""


class MessageTooLargeError(MessageRefusedError):
    """A message over the size limit."""


class UnstorableTextError(MessageRefusedError):
    """A message holding text the database cannot store (`recollect.store.storable`)."""


def max_message_chars() -> int:
    """`RECOLLECT_MAX_MESSAGE_CHARS`, a positive whole number."""
    raw = os.environ.get(MAX_MESSAGE_CHARS_ENV, "")
    try:
        value = int(raw) if raw else DEFAULT_MAX_MESSAGE_CHARS
    except ValueError as exc:
        raise ConfigurationError(
            f"{MAX_MESSAGE_CHARS_ENV} must be a whole number, got {raw!r}"
        ) from exc
    if value < 1:
        raise ConfigurationError(f"{MAX_MESSAGE_CHARS_ENV} must be 1 or more, got {value}")
    return value


def check_message(content: str | list[Any]) -> None:
    """Raise `MessageTooLargeError` when `content` exceeds the limits, `UnstorableTextError`
    when it holds text the database cannot store; cheap on any size."""
    limit = max_message_chars()
    blocks = [content] if isinstance(content, str) else list(content)
    chars = sum(len(block_text(b)) for b in blocks if is_text_block(b))
    others = sum(1 for b in blocks if not is_text_block(b))
    if chars > limit:
        raise MessageTooLargeError(
            f"message too large: {chars:,} characters, the limit is {limit:,} "
            f"({MAX_MESSAGE_CHARS_ENV}); nothing was sent or saved"
        )
    for block in blocks:
        problem = unstorable(block_text(block)) if is_text_block(block) else None
        if problem:
            raise UnstorableTextError(
                f"message holds {problem}, which cannot be stored; nothing was sent or saved"
            )
    if others > MAX_MESSAGE_BLOCKS:
        raise MessageTooLargeError(
            f"message too large: {others} attachments, the limit is {MAX_MESSAGE_BLOCKS}; "
            "nothing was sent or saved"
        )
