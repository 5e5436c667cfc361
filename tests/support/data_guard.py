"""Keeping the test run away from the project's own data folder (`.recollect/`).

A developer's `recollect chat` reads the embedded database under the project; a test that
wrote there would hand its jobs and threads to that chat. The run points `RECOLLECT_DATA_DIR`
at a temporary folder, fingerprints `.recollect/` before and after, and checks the environment
of every process it starts. A server kept running there (`recollect db start`) rewrites its
own files meanwhile, so its data is fingerprinted by rows per table instead of bytes.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

from tests.support.server_rows import rows_per_table, running_uri

PROJECT_ROOT = Path(__file__).resolve().parents[2]
PROJECT_DATA = PROJECT_ROOT / ".recollect"
DATABASE_VARIABLES = ("RECOLLECT_DATABASE_URI", "DATABASE_URI", "POSTGRES_URI")
_POSTGRES_SCHEMES = ("postgresql://", "postgres://", "host=", "dbname=")


SERVER = "server on pgdata"
"""The key saying whether a server was running: its files are then left out, its rows in."""


def fingerprint(folder: Path) -> dict[str, str] | None:
    """Every file under `folder` with its size and SHA-256 (a link with its target); but
    while a server runs on `folder/pgdata`, its rows per table instead of its files. None
    when the folder is absent."""
    if not folder.exists():
        return None
    pgdata = folder / "pgdata"
    uri = running_uri(pgdata)
    prints: dict[str, str] = {SERVER: "stopped" if uri is None else "running"}
    if uri is not None:
        prints.update({f"rows of {t}": str(n) for t, n in rows_per_table(uri).items()})
    for path in sorted(folder.rglob("*")):
        if uri is not None and (path == pgdata or pgdata in path.parents):
            continue
        relative = str(path.relative_to(folder))
        if path.is_symlink():
            prints[relative] = f"link->{os.readlink(path)}"
        elif path.is_dir():
            prints[relative] = "dir"
        elif path.is_file():
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            prints[relative] = f"{path.stat().st_size}:{digest}"
    return prints


def differences(before: dict[str, str] | None, after: dict[str, str] | None) -> list[str]:
    """What changed between two fingerprints, one line per path or table (empty: equal)."""
    if before is None or after is None:
        return [] if before == after else [f"folder {'created' if before is None else 'deleted'}"]
    both = sorted(before.keys() & after.keys(), key=lambda p: (p != SERVER, p))  # state first
    changed = [f"changed {p}" for p in both if before[p] != after[p]]
    added = [f"added {p}" for p in sorted(after.keys() - before.keys())]
    removed = [f"removed {p}" for p in sorted(before.keys() - after.keys())]
    return changed + added + removed


def data_folder_of(env: Mapping[str, str], cwd: Path) -> Path | None:
    """The embedded data folder a `recollect` process with this environment would use
    (None: it is given a database and starts no embedded server)."""
    if any(env.get(name, "").startswith(_POSTGRES_SCHEMES) for name in DATABASE_VARIABLES):
        return None
    override = env.get("RECOLLECT_DATA_DIR")
    if override:
        return Path(override).expanduser().resolve()
    here = cwd.resolve()
    for folder in (here, *here.parents):
        if (folder / "langgraph.json").exists():
            return folder / ".recollect"
    return here / ".recollect"


def points_at_project(env: Mapping[str, str], cwd: Path) -> bool:
    """Whether such a process would read or write the project's own `.recollect/`."""
    folder = data_folder_of(env, cwd)
    return folder is not None and (folder == PROJECT_DATA or PROJECT_DATA in folder.parents)
