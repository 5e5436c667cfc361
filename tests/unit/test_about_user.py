"""The test that keeps the relevance floor off a user's own questions: a pure function."""

from __future__ import annotations

import pytest

from recollect.longterm.about_user import asks_about_user


@pytest.mark.parametrize(
    "query",
    [
        "Which city does the user live in?",
        "Where do I live?",
        "What is my job?",
        "Does the user have any pets?",
        "what's the user's favourite food",
        "Wo wohne ich?",
        "Welche Stadt ist mein Wohnort?",
        "Où est-ce que j'habite ?",
        "Quel est mon travail ?",
        "¿Cuál es mi trabajo?",
        "¿Dónde vive el usuario?",
        "Onde eu moro?",
        "Qual é a minha profissão?",
        "Dove abito io?",
        "Qual è il mio lavoro?",
        "私はどこに住んでいますか\uff1f",
        "我住在哪里\uff1f",
        "제가 사는 곳은 어디예요?",
    ],
)
def test_questions_about_the_user_are_recognised(query: str) -> None:
    assert asks_about_user(query)


@pytest.mark.parametrize(
    "query",
    [
        "What is the capital of France?",
        "How are you?",
        "I moved to Tokyo.",
        "thanks!",
        "Can you tell me a joke?",
        "How do I compile a Linux kernel?",
        "Can I ask you something?",
        "should I learn Rust?",
        "What is the EU's biggest city?",
        "How does IO scheduling work?",
        "Wie kann ich Python lernen?",
        "¿Puedo hacerte una pregunta?",
        "Comment puis-je installer Docker ?",
        "Quelle heure est-il ?",
        "¿Qué hora es?",
        "Ich bin in Berlin.",
        "東京の天気は\uff1f",
    ],
)
def test_other_messages_are_not_questions_about_the_user(query: str) -> None:
    assert not asks_about_user(query)
