"""`docs/fork.md`'s travel assistant, run as written: its own tool is called, its state field
and setting reach the prompt, the refund example is not offered, and its setting is a run
setting Studio would show."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg_pool import ConnectionPool
from pydantic import TypeAdapter

from recollect import thread_config
from tests.support.scripted_openai import ScriptedOpenAI

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "fork.md"


def travel_module() -> dict[str, Any]:
    """The guide's `graphs/travel.py`, as the module a fork would write (it is registered
    while it runs: dataclasses look their module up)."""
    (source,) = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), re.S)
    module = types.ModuleType("travel_from_the_guide")
    sys.modules[module.__name__] = module
    try:
        exec(compile(source, GUIDE.name, "exec", dont_inherit=True), module.__dict__)
    finally:
        del sys.modules[module.__name__]
    return module.__dict__


def test_the_guides_agent_uses_its_tool_and_shows_its_trip(
    pool: ConnectionPool[Any], checkpointer: PostgresSaver, scripted_llm: ScriptedOpenAI
) -> None:
    travel = travel_module()
    agent = travel["make_graph"](checkpointer=checkpointer, memory=None)
    call = {"name": "flight_time", "args": {"origin": "LHR", "destination": "Lisbon"}}
    scripted_llm.reply_tool_calls([call])
    scripted_llm.reply("About two hours forty.")

    result = agent.invoke(
        {"messages": [HumanMessage("How long is my flight?")], "destination": "Lisbon"},
        thread_config("travel-1"),
        context=travel["TravelContext"](),
    )

    asked, answered = scripted_llm.chat_requests[-2:]
    assert "## Trip\nDestination: Lisbon; from LHR" in asked["messages"][0]["content"]
    assert [t["function"]["name"] for t in asked["tools"]] == ["flight_time"]
    assert any("2 h 40 min" in str(m.get("content")) for m in answered["messages"])
    assert result["messages"][-1].text == "About two hours forty."
    assert result["destination"] == "Lisbon"


def test_the_guides_setting_is_offered_as_a_run_setting() -> None:
    travel = travel_module()
    settings = TypeAdapter(travel["TravelContext"]).json_schema()["properties"]
    assert settings["home_airport"]["default"] == "LHR"
    assert "max_history_tokens" in settings
    assert "user_id" not in settings
