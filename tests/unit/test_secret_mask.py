"""One secret screen for every channel that keeps or re-prompts what a user said: pins, the
summary fold, traces, the profile and episodes all read through `mask_secrets`, and the exact
values a thread needs are still pinned."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from recollect.extraction.episodes import transcript
from recollect.gate.secrets import (
    MASK,
    has_secret,
    mask_secrets,
    mask_secrets_in,
)
from recollect.history.pinning import pins_from_messages, pins_from_text
from recollect.history.summary import cap_summary, extractive_fold, fold_prompt
from recollect.longterm.profile import Profile, ProfilePolicy, ProfileUpdate, _apply
from recollect.trace.settings import clip
from tests.support.secret_corpus import BENIGN, SAID, cores


def leaks(found: object, secret: str) -> list[str]:
    text = found if isinstance(found, str) else json.dumps(found, ensure_ascii=False)
    return [core for core in cores(secret) if core in text]


@pytest.mark.parametrize(("said", "secret"), SAID)
def test_the_screen_masks_every_shape(said: str, secret: str) -> None:
    assert has_secret(said)
    masked = mask_secrets(said)
    assert MASK in masked
    assert not leaks(masked, secret)


@pytest.mark.parametrize(("said", "secret"), SAID)
def test_a_secret_is_never_pinned(said: str, secret: str) -> None:
    pins = pins_from_messages(
        [HumanMessage(said, id="h1"), ToolMessage(said, tool_call_id="c1", id="t1")]
    )
    assert not leaks(pins, secret)
    for pin in pins.values():  # what is pinned of the sentence carries the placeholder
        assert pin["kind"] in ("preference", "constraint") or MASK not in pin["value"]


def test_an_instruction_holding_a_secret_is_pinned_masked_or_not_at_all() -> None:
    said = "I prefer to keep my OpenAI key sk-proj-4fG7hJ2kL9mN3pQ8rS1tV6wX0yZ5aB2cD7eF in .env"
    [pin] = pins_from_text(said, "h1", from_tool=False).values()
    assert pin["value"] == f"I prefer to keep my OpenAI key {MASK} in .env"
    token = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
    assert pins_from_text(f"Please use {token}", "h2", from_tool=False) == {}


@pytest.mark.parametrize(("kind", "said", "value"), BENIGN, ids=[b[0] for b in BENIGN])
def test_exact_values_a_thread_needs_are_still_pinned(kind: str, said: str, value: str) -> None:
    assert not has_secret(said)
    pins = pins_from_text(said, "h1", from_tool=False)
    assert [p["value"] for p in pins.values() if p["kind"] == kind] == [value]


def test_a_value_beside_a_secret_is_pinned_and_the_secret_is_not() -> None:
    said = "Order #884213 is late; my wifi password is Tr0ub4dor&3xq"
    pins = pins_from_text(said, "h1", from_tool=False)
    assert {p["value"] for p in pins.values()} == {"884213"}


@pytest.mark.parametrize(("said", "secret"), SAID)
def test_the_fold_prompt_and_the_extractive_fold_hold_no_secret(said: str, secret: str) -> None:
    pending = [
        HumanMessage(said, id="h1"),
        AIMessage(f"Noted: {said}", id="a1"),
        ToolMessage(said, tool_call_id="c1", name="lookup", id="t1"),
        SystemMessage(said, id="n1", additional_kwargs={"excerpt": "pins"}),
    ]
    prompt = fold_prompt(f"Earlier: {said}", pending, 200)
    assert not leaks([str(m.content) for m in prompt], secret)
    assert not leaks(extractive_fold(f"- user: {said}", pending, 400), secret)
    assert not leaks(cap_summary(f"The user said: {said}", 400), secret)


@pytest.mark.parametrize(("said", "secret"), SAID)
def test_trace_texts_profile_values_and_episode_transcripts_hold_no_secret(
    said: str, secret: str
) -> None:
    assert not leaks(clip(said, 30), secret), "masked before the cut"
    assert not leaks(mask_secrets_in({"a": [said, {"b": said}], "n": 3}), secret)
    profile = Profile()
    _apply(profile, [ProfileUpdate("preferences", said)], set(), ProfilePolicy())
    assert not leaks(profile.fields, secret)
    lines = transcript([HumanMessage(said, id="h1"), AIMessage(said, id="a1")], f"- user: {said}")
    assert not leaks([line.content for line in lines], secret)


def test_a_profile_value_that_is_only_a_secret_is_not_kept() -> None:
    profile = Profile()
    _apply(profile, [ProfileUpdate("token", "sk-proj-4fG7hJ2kL9mN3pQ8rS1tV6wX0yZ5aB2cD7eF")],
           set(), ProfilePolicy())  # fmt: skip
    assert "token" not in profile.fields
