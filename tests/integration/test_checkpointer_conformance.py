"""The served checkpointer (`langgraph.json`'s `platform_checkpointer`: scoped, retaining,
pipelined) passes LangGraph's checkpointer conformance suite, as the app role under row-level
security, with retention on (as served) and off."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from psycopg_pool import AsyncConnectionPool

from recollect.history.persistence import PlatformPostgresSaver
from recollect.history.retention import DEFAULT_RETENTION
from recollect.store.roles import app_uri
from recollect.store.server import CONNECTION_KWARGS
from tests.support.db import DEFAULT_SCOPE

conformance = pytest.importorskip("langgraph.checkpoint.conformance")


@pytest.mark.parametrize("retain", [DEFAULT_RETENTION, 0])
def test_the_served_checkpointer_passes_the_conformance_suite(
    database_uri: str, retain: int
) -> None:
    @conformance.checkpointer_test(name=f"PlatformPostgresSaver(retain={retain})")
    async def served_saver() -> AsyncIterator[PlatformPostgresSaver]:
        pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
            app_uri(database_uri), max_size=4, kwargs=dict(CONNECTION_KWARGS), open=False
        )
        await pool.open(wait=True)
        try:
            saver = PlatformPostgresSaver(pool)
            saver.retain = retain
            saver.scope = DEFAULT_SCOPE
            yield saver
        finally:
            await pool.close()

    report = asyncio.run(conformance.validate(served_saver))
    failures = {name: result.failures for name, result in report.results.items() if result.failures}
    assert report.passed_all_base(), failures
    assert not failures
