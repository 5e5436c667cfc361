"""What Studio shows of each graph, read from `langgraph dev` as Studio reads it: every graph's
input, output, state and context schemas; run settings with descriptions and defaults (the
defaults as the project's `.env` sets them); no setting that authentication owns; each graph
only its own settings; and a description per graph."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from langgraph_sdk.client import SyncLangGraphClient

from recollect.state.run_settings import AUTH_OWNED
from state.agent import AgentContext
from state.approval import ApprovalContext
from state.memory import MemoryContext
from state.orchestrator import OrchestratorContext
from tests.support.langgraph_dev import (
    ALICE_KEY,
    PROJECT_ROOT,
    client_for,
    langgraph_dev,
    project_config_in,
)

PROMPT_FROM_ENV_FILE = "You answer in the voice of a ship's log."
OFFERED = {
    "agent": AgentContext.offered_settings,
    "memory": MemoryContext.offered_settings,
    "approval": ApprovalContext.offered_settings,
    "orchestrator": OrchestratorContext.offered_settings,
}


@pytest.fixture(scope="module")
def studio(
    module_database_uri: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SyncLangGraphClient]:
    """`langgraph dev` started as a fork starts it: in its own folder, with a `.env` there."""
    folder = tmp_path_factory.mktemp("served")
    (folder / ".env").write_text(f'RECOLLECT_SYSTEM_PROMPT="{PROMPT_FROM_ENV_FILE}"\n')
    config = project_config_in(folder)
    env = {"RECOLLECT_DATABASE_URI": module_database_uri}
    with langgraph_dev(env, folder / "dev.log", config=config, cwd=folder) as url:
        yield client_for(url, ALICE_KEY)


@pytest.fixture(scope="module")
def schemas(studio: SyncLangGraphClient) -> dict[str, dict[str, Any]]:
    found = {}
    for graph_id in OFFERED:
        (assistant,) = studio.assistants.search(graph_id=graph_id, limit=1)
        found[graph_id] = {**studio.assistants.get_schemas(assistant["assistant_id"])}
        found[graph_id]["description"] = assistant.get("description")
    return found


def test_every_graph_in_langgraph_json_is_checked() -> None:
    graphs = json.loads((PROJECT_ROOT / "langgraph.json").read_text())["graphs"]
    assert set(graphs) == set(OFFERED)


@pytest.mark.parametrize("graph_id", sorted(OFFERED))
def test_every_schema_is_there(schemas: dict[str, dict[str, Any]], graph_id: str) -> None:
    shown = schemas[graph_id]
    for kind in ("input_schema", "output_schema", "state_schema", "context_schema"):
        assert shown[kind], f"{graph_id}: {kind} is {shown[kind]!r}"
        assert shown[kind]["properties"] is not None
    assert shown["input_schema"]["properties"], graph_id
    assert shown["output_schema"]["properties"], graph_id


@pytest.mark.parametrize("graph_id", sorted(OFFERED))
def test_each_graph_offers_its_own_settings_and_none_of_the_identitys(
    schemas: dict[str, dict[str, Any]], graph_id: str
) -> None:
    settings = schemas[graph_id]["context_schema"]["properties"]
    assert set(settings) == OFFERED[graph_id]
    assert not set(settings) & AUTH_OWNED
    for name, setting in settings.items():
        assert setting.get("description"), f"{graph_id}.{name} has no description"
        assert "default" in setting, f"{graph_id}.{name} has no default"


def test_the_agent_offers_no_orchestrator_setting(schemas: dict[str, dict[str, Any]]) -> None:
    agent = set(schemas["agent"]["context_schema"]["properties"])
    assert "max_history_tokens" in agent
    assert not agent & {"per_worker_tokens", "handoff_tokens", "max_workers", "worker_max_steps"}


def test_defaults_are_the_ones_the_env_file_sets(schemas: dict[str, dict[str, Any]]) -> None:
    prompt = schemas["agent"]["context_schema"]["properties"]["system_prompt"]
    assert prompt["default"] == PROMPT_FROM_ENV_FILE
    assert schemas["agent"]["context_schema"]["properties"]["max_history_tokens"]["default"] == 3000


def test_the_agents_input_is_its_messages(schemas: dict[str, dict[str, Any]]) -> None:
    assert set(schemas["agent"]["input_schema"]["properties"]) == {"messages"}
    assert "pinned" in schemas["agent"]["state_schema"]["properties"]


@pytest.mark.parametrize("graph_id", sorted(OFFERED))
def test_every_graph_is_described(schemas: dict[str, dict[str, Any]], graph_id: str) -> None:
    assert schemas[graph_id]["description"]
