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
    ],
)
def test_other_messages_are_not_questions_about_the_user(query: str) -> None:
    assert not asks_about_user(query)
