"""Whether a query asks something about the user: such a question is never off topic.

The relevance floor sets aside every candidate of a query that shares no word with them and
comes nowhere near in meaning. A direct question about the user can do both and still have its
answer in memory: "Which city does the user live in?" against the only fact "Relocated to Tokyo
for work" shares no word and sits below e5's floor. So a question whose subject or owner is the
user ("I", "my", "the user", and their forms in de, fr, es, pt, it, ja, zh and ko) keeps its
candidates; ranking still orders them.
"""

from __future__ import annotations

import re

_QUESTION_START = re.compile(
    r"^\s*(?:¿|"
    r"(what|which|where|when|who|whom|whose|why|how|do|does|did|am|is|are|was|were|have|"
    r"has|had|can|could|will|would|should|shall"  # en
    r"|was|welche[rsmn]?|wo|wann|wer|wie|warum|habe|hat|bin|ist"  # de
    r"|quel(?:le)?s?|où|quand|qui|comment|pourquoi|est-ce"  # fr
    r"|qué|cuál(?:es)?|dónde|cuándo|quién|cómo|por qué"  # es
    r"|que|qual|quais|onde|quando|quem|como|porque"  # pt
    r"|che|quale|quali|dove|chi|come|perché)\b)",  # it
    re.IGNORECASE,
)
_QUESTION_END = re.compile(r"[?\uff1f]\s*$|[かの]\s*[。\uff1f?]?\s*$")
_ABOUT_USER = re.compile(
    r"\b(i|my|mine|myself|the user|the user's|user's"  # en
    r"|ich|mein(?:e[mnrs]?)?|mir|mich|(?:des |der |dem )?(?:be)?nutzers?"  # de
    r"|je|j'|mon|ma|moi|l'utilisateur|de l'utilisateur"  # fr
    r"|mi|mis|mío|mía|el usuario|del usuario"  # es
    r"|meu|meus|minha|minhas|o usuário|do usuário|o utilizador|do utilizador"  # pt
    r"|mio|mia|miei|mie|l'utente|dell'utente"  # it
    r"|(?-i:eu|io))\b"  # pt, it: lower case only ("EU", "IO" are not the user)
    r"|私|僕|俺|わたし|ユーザー|我|用户|用戶|내|제가|제 |나는|저는|사용자",  # ja, zh, ko
    re.IGNORECASE,
)
_ASKS_FOR_HELP = re.compile(
    r"^\s*¿?(how\s+(do|can|could|should|would)\s+i|(can|could|should|shall|may)\s+i"
    r"|wie\s+kann\s+ich|kann\s+ich|comment\s+(puis-je|faire)|puis-je"
    r"|cómo\s+puedo|puedo|como\s+posso|posso|come\s+posso)\b",
    re.IGNORECASE,
)
""""How do I compile a kernel?", "Can I ask you something?", "Kann ich …?", "¿Puedo …?": the
user asks for help, not about themself, so the floor still judges these."""


def asks_about_user(query: str) -> bool:
    """A question (a question mark, or a question word first) whose subject or owner is the
    user, and that does not ask for help ("How do I ...?", "Can I ...?")."""
    text = query.strip()
    is_question = bool(_QUESTION_END.search(text) or _QUESTION_START.match(text))
    if not is_question or _ASKS_FOR_HELP.match(text):
        return False
    return bool(_ABOUT_USER.search(text.replace("\u2019", "'")))
