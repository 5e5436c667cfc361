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
from recollect.history.tokens import text_tokens


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


def test_the_cap_is_a_hard_cut_on_a_word_boundary_that_drops_the_oldest_part() -> None:
    text = " ".join(f"w{i:03d}" for i in range(500))
    capped = cap_summary(text, 50)
    assert text_tokens(capped) <= 50
    assert capped.startswith("…w")
    assert capped.endswith("w499"), "the newest part of the summary survives the cap"
    assert "w000" not in capped
    share = text_tokens(capped) / 50
    assert share > 0.8, f"the cap keeps most of its share, not a sliver ({share:.0%})"
    assert cap_summary("short", 50) == "short"


def test_the_cap_counts_chinese_and_japanese_per_character() -> None:
    for sentence in (
        "用户的订单号是八八四二\uff0c需要退款。",
        "注文番号は八八四二で、返金が必要です。",
    ):
        capped = cap_summary(sentence * 40, 60)
        assert text_tokens(capped) <= 60
        assert len(capped) <= 62, "a CJK character is about a token, not a quarter of one"


def test_the_offline_fold_keeps_the_users_words_newest_first_within_the_cap() -> None:
    pending = [HumanMessage(content=f"point {i} " + "w " * 20, id=str(i)) for i in range(30)]
    pending.append(AIMessage(content="assistant text is not folded", id="a"))
    text = extractive_fold("- user: earlier", pending, 100)
    assert text_tokens(text) <= 100
    assert "point 29" in text
    assert "assistant text" not in text
    assert "earlier" not in text, "the oldest lines give way at the cap"
