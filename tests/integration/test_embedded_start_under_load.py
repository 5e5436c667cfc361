"""On a loaded machine `pg_ctl start` can outlast the 10 s the embedded package gives it, while
Postgres goes on starting: `recollect` then joins the server once it is ready instead of
failing. The cut-off is forced here by giving the first `pg_ctl start` no time at all."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg
import pytest

from recollect.store.server import embedded_package, embedded_server, start_embedded


def test_a_start_cut_off_by_its_timeout_is_joined_once_ready(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = embedded_package()
    real = package.pgexec
    cut: list[str] = []

    def first_start_cut_off(command: str, args: Any, **kwargs: Any) -> Any:
        if command == "pg_ctl" and "start" in args and not cut:
            cut.append(command)
            kwargs["timeout"] = 0.01
        return real(command, args, **kwargs)

    monkeypatch.setattr(package, "pgexec", first_start_cut_off)
    uri = start_embedded(tmp_path, announce=False)
    try:
        assert cut == ["pg_ctl"]
        with psycopg.connect(uri) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
    finally:
        embedded_server(tmp_path).cleanup()
