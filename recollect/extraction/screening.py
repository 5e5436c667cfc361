"""Prompt-injection screening: a "fact" that instructs the assistant is not a fact.

Anything stored in long-term memory is put in front of the model in every later session, so
an instruction smuggled in as a fact ("ignore previous instructions", "you are now …", a role
marker, a tool or URL directive) would act on every future conversation. Each rule has a name,
which is the reason recorded when it fires.
"""

from __future__ import annotations

import re
import unicodedata

_VERBS_REVEAL = r"(?:reveal|disclose|leak|expose|dump|exfiltrate)"
_VERBS_SHOW = r"(?:reveal|disclose|leak|expose|dump|print|output|show|repeat|tell\s+me)"
_SECRETS = (
    r"(?:system\s+prompt|(?:your|the\s+(?:hidden|secret|initial|original|system))\s+"
    r"(?:instructions|prompt|rules)|passwords?|secrets?|api[\s_-]?keys?|credentials?|"
    r"access\s+tokens?|private\s+keys?)"
)
_IMPERATIVE = (
    r"(?:^|[.!?;:]\s+|\b(?:please|then|now|immediately|always|you\s+(?:must|should|will))\s+)"
)
_ASSISTANT = r"(?:the\s+)?(?:assistant|ai|model|bot|chatbot|agent|llm|you)"

RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, re.IGNORECASE))
    for name, pattern in (
        (
            "override of earlier instructions",
            r"\b(?:ignore|disregard|forget|override|bypass|skip|drop)\s+(?:all\s+|any\s+|the\s+|"
            r"your\s+|every\s+)*(?:previous|prior|above|earlier|preceding|former|existing|"
            r"original|system|safety|other)\s+(?:instructions?|rules?|prompts?|directions?|"
            r"guidelines?|messages?|context|constraints?|guardrails?|filters?)",
        ),
        (
            "override of earlier instructions",
            r"\b(?:ignore|disregard|forget)\s+(?:everything|all)\s+(?:you\s+were\s+told|above|"
            r"before|previously)",
        ),
        ("new instructions", r"\bnew\s+(?:instructions?|rules?|system\s+prompt)\s*[:\-]"),
        (
            "standing order to the assistant",
            rf"\b(?:always|never|must|should)\s+(?:{_VERBS_REVEAL}|obey|comply|follow\s+"
            r"(?:these|my|the\s+following))\b",
        ),
        (
            "standing order to the assistant",
            rf"\b{_ASSISTANT}\s+(?:must|should|shall|will|has\s+to|is\s+required\s+to)\s+"
            r"(?:always|never|now|from\s+now|ignore|obey|comply|reply|respond|answer|say|"
            rf"tell|call|use|run|{_VERBS_REVEAL})\b",
        ),
        (
            "request for secrets",
            rf"\b{_VERBS_SHOW}\s+(?:me\s+|us\s+)?(?:the\s+|all\s+|any\s+|your\s+)?{_SECRETS}\b",
        ),
        (
            "persona change",
            r"\b(?:you\s+are\s+now|you're\s+now|from\s+now\s+on,?\s+(?:you|act|respond|reply|"
            r"answer|behave)|(?:^|\byou\s+(?:will|must|should|shall)?\s*)act\s+as\b|pretend\s+(?:to\s+be|you\s+are|that)|"
            r"role-?play\s+as|you\s+will\s+now\s+be|switch\s+to\s+\w+\s+mode|developer\s+mode|"
            r"jailbreak\s+(?:yourself|the\s+(?:assistant|model|ai)|mode)|\bDAN\b|do\s+anything\s+now)",
        ),
        (
            "role marker",
            r"(?:^|\n)\s*(?:system|assistant|developer|user|human|ai)\s*:|<\|?(?:im_start|im_end|"
            r"system|endoftext|eot_id|start_header_id)\|?>|\[/?INST\]|<<\s*SYS\s*>>|</?\s*"
            r"(?:system|assistant|instructions?)\s*>|#{2,}\s*(?:instruction|system|response)",
        ),
        (
            "tool directive",
            rf"{_IMPERATIVE}(?:call|invoke|execute|trigger|run|use)\s+(?:the\s+|a\s+|this\s+)?"
            r"(?:[\w.-]+\s+){0,2}(?:tool|function|command|plugin|shell)\b",
        ),
        ("tool directive", r"\b(?:curl|wget|rm\s+-rf|exec\(|eval\(|os\.system|subprocess)\b"),
        (
            "URL directive",
            rf"{_IMPERATIVE}(?:visit|open|fetch|browse|navigate\s+to|go\s+to|load|click|download|"
            r"send|post|upload|forward|exfiltrate|submit|report|email)\b[^\n]{0,80}(?:https?://|www\.|"
            r"\b\w+\.(?:com|net|org|io|xyz|ru|cn)/)",
        ),
        (
            "URL directive",
            r"!\[[^\]]*\]\(\s*https?://|(?:https?://)[^\s]*(?:\?|&)(?:q|data|d|exfil|c|p)=\{?",
        ),
        (
            "instruction to the assistant",
            r"^\s*(?:hey\s+)?(?:assistant|ai|chatgpt|claude|model|bot)\s*[,:]\s*(?:please\s+)?\w+",
        ),
        (
            "instruction to the assistant",
            r"\b(?:do\s+not|don't|never)\s+(?:tell|inform|mention\s+(?:this\s+)?to|warn|let)\s+"
            r"(?:the\s+)?(?:user|anyone|them)\b",
        ),
        (
            "instruction to the assistant",
            r"\b(?:when|whenever|if)\s+(?:the\s+)?(?:user|anyone|someone)\s+(?:asks?|says?|"
            r"mentions?|types?)\b[^.]{0,80}\b(?:respond|reply|answer|say|tell|output|send)\b",
        ),
    )
)

_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"), None)


def canonical(text: str) -> str:
    """What the rules read: NFKC (full-width and look-alike forms folded), zero-widths gone."""
    return unicodedata.normalize("NFKC", text).translate(_ZERO_WIDTH)


def screen(text: str) -> tuple[str, ...]:
    """Reasons this text is an instruction rather than a fact; empty when it is clean."""
    folded = canonical(text)
    return tuple(dict.fromkeys(f"injection: {name}" for name, rule in RULES if rule.search(folded)))
