"""Whether a query asks something about the user: such a question is never off topic.

The relevance floor sets aside every candidate of a query that shares no word with them and
comes nowhere near in meaning. A direct question about the user can do both and still have its
answer in memory: "Which city does the user live in?" against the only fact "Relocated to Tokyo
for work" shares no word and sits below e5's floor. So a question whose subject or owner is the
user ("I", "my", "the user") keeps its candidates; ranking still orders them. English forms
only, like the stop words the floor reads.
"""

from __future__ import annotations

import re

_QUESTION_START = re.compile(
    r"^\s*(what|which|where|when|who|whom|whose|why|how|do|does|did|am|is|are|was|were|have|"
    r"has|had|can|could|will|would|should|shall)\b",
    re.IGNORECASE,
)
_ABOUT_USER = re.compile(r"\b(i|my|mine|myself|the user|the user's|user's)\b", re.IGNORECASE)
_ASKS_FOR_HELP = re.compile(
    r"^\s*(how\s+(do|can|could|should|would)\s+i|(can|could|should|shall|may)\s+i)\b",
    re.IGNORECASE,
)
""""How do I compile a kernel?", "Can I ask you something?": the user asks for help, not about
themself, so the floor still judges these."""


def asks_about_user(query: str) -> bool:
    """A question ("?" or a question word first) whose subject or owner is the user, and that
    does not ask for help ("How do I ...?", "Can I ...?")."""
    text = query.strip()
    is_question = text.endswith("?") or bool(_QUESTION_START.match(text))
    if not is_question or _ASKS_FOR_HELP.match(text):
        return False
    return bool(_ABOUT_USER.search(text.replace("\u2019", "'")))
