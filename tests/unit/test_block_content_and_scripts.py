"""Block-list content is counted and cut like strings; CJK text is counted per character;
what a cut leaves out goes on to the fold and to extraction."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from recollect.history.content import EXCERPT_KEY, MAX_NON_TEXT_BLOCKS
from recollect.history.summary import fold_prompt
from recollect.history.tokens import NON_TEXT_BLOCK_TOKENS, message_tokens, text_tokens
from recollect.history.truncation import truncate_text
from recollect.history.window import fit_window
from recollect.prebuilt.extract import buffered
from recollect.prebuilt.prompt import build_prompt
from recollect.state.context import Context

IMAGE = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 40_000}}


def _block_tool_result(tokens: int) -> ToolMessage:
    text = {"type": "text", "text": "row " * tokens}
    return ToolMessage(content=[text, text], tool_call_id="c1", name="mcp_search", id="t1")


def test_a_block_list_tool_result_is_cut_to_its_share_of_the_budget() -> None:
    call = AIMessage(
        content="", id="a1", tool_calls=[{"name": "mcp_search", "args": {}, "id": "c1"}]
    )
    result = _block_tool_result(24_750)  # 49,500 tokens in two text blocks
    assert message_tokens([result]) >= 49_500
    state = {"messages": [HumanMessage(content="search", id="h1"), call, result]}
    prompt = build_prompt(state, Context(context_tokens=6000))
    assert prompt.tokens["total"] <= 6000
    assert prompt.tokens["cut_tool_results"] == 1
    sent = prompt.messages[-1]
    assert isinstance(sent.content, list), "blocks stay blocks"
    assert "characters" in sent.content[0]["text"], "the cut is marked"


def test_non_text_blocks_are_counted_flat_and_capped() -> None:
    many = HumanMessage(content=[{"type": "text", "text": "look"}, *[IMAGE] * 10], id="h1")
    assert message_tokens([many]) < 10 * NON_TEXT_BLOCK_TOKENS + 50, "not the base64 size"
    window = fit_window([many], 1500)
    kept = window.kept[0].content
    assert isinstance(kept, list)
    images = [b for b in kept if isinstance(b, dict) and b.get("type") == "image_url"]
    assert len(images) <= MAX_NON_TEXT_BLOCKS
    assert message_tokens(window.kept) <= 1500
    assert any("[image_url omitted]" in str(b) for b in kept)


def test_chinese_and_japanese_are_counted_per_character() -> None:
    chinese = "我的订单号是八八四二，被重复扣款了两次，请帮我退款。"  # noqa: RUF001
    japanese = "注文番号は八八四二です。二回請求されたので返金してください。"
    english = "My order number is 8842 and I was charged twice, please refund me."
    for text in (chinese, japanese):
        assert text_tokens(text) >= len(text) * 0.9, "about one token per character"
    assert text_tokens(english) == -(-len(english) // 4)
    assert text_tokens(chinese) > 3 * -(-len(chinese) // 4), "chars/4 undercounts it"
    cut = truncate_text(chinese * 400, 300)
    assert text_tokens(cut) <= 300, "a Chinese text is cut to its budget, not four times over"


def test_a_cjk_conversation_fits_the_same_budget_as_an_english_one() -> None:
    japanese = "注文番号は八八四二です。二回請求されたので返金してください。" * 20
    messages = [HumanMessage(content=japanese, id=f"h{i}") for i in range(30)]
    window = fit_window(messages, 2000)
    assert message_tokens(window.kept) <= 2000
    assert len(window.kept) < 30


def test_the_middle_a_cut_removes_goes_to_the_fold_and_to_extraction() -> None:
    middle = "the customer also said the blue parcel went to Leeds instead of York"
    long = HumanMessage(content="start " * 3000 + middle + " end" * 3000, id="big")
    window = fit_window([long], 800)
    assert middle not in window.kept[0].text
    assert window.excerpts, "the cut middle is kept as excerpts"
    assert all(e.additional_kwargs[EXCERPT_KEY] == "big" for e in window.excerpts)
    assert any(middle in e.text for e in window.excerpts)
    assert (
        sum(len(e.text) for e in window.excerpts) + len(window.kept[0].text) >= len(long.text) - 200
    ), "nothing but the marker is lost"
    fold = fold_prompt("", window.excerpts, 200)[1].text
    assert middle in fold
    queued = buffered([*window.excerpts, *window.kept])
    assert any(middle in m.content for m in queued)
    shown = build_prompt(
        {"messages": window.kept, "unfolded": window.excerpts}, Context(context_tokens=3000)
    )
    assert middle not in str([m.content for m in shown.messages]), "excerpts are not shown"
