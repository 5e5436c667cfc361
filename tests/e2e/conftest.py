"""One `langgraph dev` per test module, for modules whose tests share a server (starting one
is slow): its own migrated database, the test keys, a clean environment, a log of its own."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator

import psycopg
import pytest

from recollect.store.server import with_database
from tests.support.langgraph_dev import langgraph_dev

TEMPLATE_DB = "recollect_template"
"""The migrated template `tests/conftest.py` clones every test database from."""
_INHERITED = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "DATABASE_URI",
    "POSTGRES_URI",
    "RECOLLECT_MODEL",
    "RECOLLECT_USER_ID",
    "RECOLLECT_ORG_ID",
    "RECOLLECT_STUDIO_IDENTITY",
    "RECOLLECT_EMBEDDINGS",
    "RECOLLECT_RERANKER",
)
"""What the server must not inherit from the shell (the per-test fixtures clear it too)."""
_numbers = itertools.count(1)


@pytest.fixture(scope="module")
def module_database_uri(postgres_server: str) -> Iterator[str]:
    """A migrated database that lives as long as the test module."""
    name = f"served_{os.getpid()}_{next(_numbers)}"
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{TEMPLATE_DB}"')
    yield with_database(postgres_server, name)
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="module")
def served_env() -> dict[str, str]:
    """Variables the module's server gets beyond its database (a module overrides this)."""
    return {}


@pytest.fixture(scope="module")
def served_module(
    module_database_uri: str, served_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """The base URL of a `langgraph dev` shared by the module's tests."""
    log = tmp_path_factory.mktemp("served") / "dev.log"
    with pytest.MonkeyPatch.context() as env:
        for name in _INHERITED:
            env.delenv(name, raising=False)
        with langgraph_dev(
            {"RECOLLECT_DATABASE_URI": module_database_uri, **served_env}, log
        ) as url:
            yield url
