"""The served process settles its heap on its first run's state read: the startup objects frozen
out of the collector, young collections spaced out; once, and not when told off. Each case runs
in a fresh interpreter, as the collector's settings are the whole process's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from recollect.store.errors import ConfigurationError
from recollect.store.heap import OLDER_THRESHOLDS, SETTLE_ENV, YOUNG_THRESHOLD, settle_enabled
from recollect.store.roles import app_uri

FIRST_READ = textwrap.dedent(
    """
    import asyncio, gc, json, sys
    from psycopg_pool import AsyncConnectionPool
    from recollect.history.persistence import PlatformPostgresSaver
    from recollect.store.scope import Scope
    from recollect.store.server import CONNECTION_KWARGS

    async def main() -> None:
        pool = AsyncConnectionPool(sys.argv[1], kwargs=dict(CONNECTION_KWARGS), open=False)
        await pool.open(wait=True)
        saver = PlatformPostgresSaver(pool)
        saver.scope = Scope.for_user("acme", "alice")
        before = gc.get_freeze_count()
        config = {"configurable": {"thread_id": "t-1", "checkpoint_ns": ""}}
        await saver.aget_tuple(config)
        first = (gc.get_freeze_count(), gc.get_threshold())
        gc.unfreeze()
        await saver.aget_tuple(config)  # a later read leaves the collector alone
        print(json.dumps({"before": before, "first": first, "again": gc.get_freeze_count()}))
        await pool.close()

    asyncio.run(main())
    """
)


def _first_read(database_uri: str, **env: str) -> dict[str, object]:
    result = subprocess.run(
        [sys.executable, "-c", FIRST_READ, app_uri(database_uri)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env},
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    out: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
    return out


def test_the_first_state_read_freezes_the_heap_and_spaces_young_collections(
    database_uri: str,
) -> None:
    seen = _first_read(database_uri)
    assert seen["before"] == 0
    frozen, threshold = seen["first"]  # type: ignore[misc]
    assert frozen > 10_000  # LangGraph, psycopg and the engine, at least
    assert threshold == [YOUNG_THRESHOLD, *OLDER_THRESHOLDS]
    assert seen["again"] == 0  # settled once: the second read did not freeze again


def test_told_off_the_process_keeps_the_interpreters_defaults(database_uri: str) -> None:
    seen = _first_read(database_uri, **{SETTLE_ENV: "off"})
    frozen, threshold = seen["first"]  # type: ignore[misc]
    assert frozen == 0
    assert threshold == [700, 10, 10]


def test_a_setting_that_is_neither_on_nor_off_is_refused_with_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(SETTLE_ENV, "sometimes")
    with pytest.raises(ConfigurationError, match="RECOLLECT_GC_SETTLE must be on or off"):
        settle_enabled()
    for word in ("on", "OFF", " yes ", "0"):
        monkeypatch.setenv(SETTLE_ENV, word)
        assert settle_enabled() is (word.strip().lower() in ("on", "yes"))
