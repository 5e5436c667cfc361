"""One token estimate for every budget: per script, per content block, no downloads.

Four characters per token holds for English but undercounts Chinese and Japanese about fourfold
(a Han or kana character is roughly one token in the common BPE vocabularies) and Cyrillic,
Greek, Arabic or Hebrew about twofold. Counting each script at its own rate keeps a budget a
budget whatever language the user writes in, without shipping a tokenizer.

A message's content may be a list of blocks (multimodal input, MCP and Anthropic-style tool
results): text blocks are counted as text, every other block (an image, a file, audio) at a
flat `NON_TEXT_BLOCK_TOKENS`, whatever its encoded size.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

LATIN_CHARS_PER_TOKEN = 4
"""ASCII and Latin-script text, as LangChain's `count_tokens_approximately` counts it."""
OTHER_CHARS_PER_TOKEN = 2
"""Alphabetic scripts outside Latin (Cyrillic, Greek, Arabic, Hebrew, Thai, Devanagari ...)."""
NON_TEXT_BLOCK_TOKENS = 256
"""An image or file block, whatever its size on the wire (a low-detail image is 85)."""
MESSAGE_OVERHEAD_TOKENS = 3
"""Role and framing per message, as `count_tokens_approximately` adds."""

_DENSE = re.compile(
    "[\u1100-\u11ff\u2e80-\u2fdf\u3000-\u303f\u3040-\u30ff\u3100-\u31ff\u3400-\u4dbf"
    "\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff\uff00-\uffef\U00020000-\U0003ffff]"
)
"""Han, kana, Hangul and full-width forms: about one token per character."""
_WIDE = re.compile("[\u0370-\u10ff\u1200-\u1fff]")
"""Non-Latin alphabets and abjads (Greek through Ethiopic, Hebrew, Arabic)."""


def text_tokens(text: str) -> int:
    """Estimated tokens of `text`: dense scripts per character, others per 2 or 4 characters."""
    if not text:
        return 0
    if text.isascii():
        return math.ceil(len(text) / LATIN_CHARS_PER_TOKEN)
    dense = len(_DENSE.findall(text))
    wide = len(_WIDE.findall(text))
    latin = len(text) - dense - wide
    return dense + math.ceil(wide / OTHER_CHARS_PER_TOKEN + latin / LATIN_CHARS_PER_TOKEN)


def is_text_block(block: Any) -> bool:
    """A plain string or a `{"type": "text", "text": ...}` block."""
    return isinstance(block, str) or (
        isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    )


def block_text(block: Any) -> str:
    """The text of a text block ('' for any other block)."""
    if isinstance(block, str):
        return block
    if is_text_block(block):
        return str(block["text"])
    return ""


def content_tokens(content: str | list[Any]) -> int:
    """Tokens of a message's content, whether a string or a list of blocks."""
    if isinstance(content, str):
        return text_tokens(content)
    return sum(
        text_tokens(block_text(block)) if is_text_block(block) else NON_TEXT_BLOCK_TOKENS
        for block in content
    )


def message_tokens(messages: Sequence[BaseMessage]) -> int:
    """The one counter for every budget: content, tool-call arguments, role and framing."""
    total = 0
    for message in messages:
        total += MESSAGE_OVERHEAD_TOKENS + content_tokens(message.content)
        if isinstance(message, AIMessage) and message.tool_calls:
            for call in message.tool_calls:
                arguments = json.dumps(call["args"], ensure_ascii=False)
                total += (
                    text_tokens(call["name"])
                    + text_tokens(arguments)
                    + text_tokens(str(call.get("id") or ""))
                )
        name = getattr(message, "name", None)
        if name:
            total += text_tokens(str(name))
    return total


def count_messages(messages: Sequence[BaseMessage]) -> int:
    """`message_tokens` with the signature `trim_messages` expects of a token counter."""
    return message_tokens(list(messages))
