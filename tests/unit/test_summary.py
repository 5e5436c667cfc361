"""The fold's trigger, prompt shape and caps, without a model."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from recollect.history.summary import (
    cap_summary,
    extractive_fold,
    fold_due,
    fold_prompt,
    render_for_fold,
)
from recollect.history.truncation import text_tokens


def test_the_trigger_adapts_to_message_size() -> None:
    small = [HumanMessage(content="w" * 40, id=str(i)) for i in range(3)]
    assert not fold_due(small, 3000), "a few short messages wait"
    assert fold_due(small * 20, 3000), "many short messages fold"
    big = [ToolMessage(content="x" * 8000, tool_call_id="c", id="t")]
    assert fold_due(big, 3000), "one large message folds at once"
    assert not fold_due([], 3000)


def test_the_prompt_carries_the_old_summary_and_only_the_new_messages() -> None:
    pending = [
        HumanMessage(content="hello, I want to upgrade React", id="h"),
        AIMessage(content="", tool_calls=[{"name": "search", "args": {}, "id": "c"}], id="a"),
        ToolMessage(content="r" * 5000, tool_call_id="c", name="search", id="t"),
    ]
    system, human = fold_prompt("User leads payments.", pending, 200)
    assert "at most 140 words" in system.text
    assert human.text.startswith("Current summary:\nUser leads payments.\n\nNew messages")
    assert "User: hello, I want to upgrade React" in human.text
    assert "Assistant [called search]:" in human.text
    assert text_tokens(render_for_fold(pending[2])) < 200, "tool output is cut"


def test_the_cap_is_a_hard_cut_on_a_word_boundary() -> None:
    text = "alpha " * 500
    capped = cap_summary(text, 50)
    assert text_tokens(capped) <= 50
    assert capped.endswith("alpha…")
    assert cap_summary("short", 50) == "short"


def test_the_offline_fold_keeps_the_users_words_newest_first_within_the_cap() -> None:
    pending = [HumanMessage(content=f"point {i} " + "w " * 20, id=str(i)) for i in range(30)]
    pending.append(AIMessage(content="assistant text is not folded", id="a"))
    text = extractive_fold("- user: earlier", pending, 100)
    assert text_tokens(text) <= 100
    assert "point 29" in text
    assert "assistant text" not in text
    assert "earlier" not in text, "the oldest lines give way at the cap"
