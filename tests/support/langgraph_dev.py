"""Start `langgraph dev` on a free local port for end-to-end tests, and stop it cleanly."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from langgraph_sdk import get_sync_client
from langgraph_sdk.client import SyncLangGraphClient
from langgraph_sdk.errors import APIStatusError

PROJECT_ROOT = Path(__file__).resolve().parents[2]
STARTUP_TIMEOUT_S = 120

ALICE_KEY = "alice-key-0123456789abcdef"
BOB_KEY = "bob-key-0123456789abcdef"
DANA_KEY = "dana-key-0123456789abcdef"
MARIA_KEY = "maria-key-0123456789abcdef"
GINA_KEY = "gina-key-0123456789abcdef"
OPS_KEY = "ops-key-0123456789abcdef"
OLGA_KEY = "olga-key-0123456789abcdef"
API_KEYS = {
    ALICE_KEY: "acme/alice",
    BOB_KEY: "acme/bob",
    DANA_KEY: "acme/dana",
    MARIA_KEY: "acme/maria:reviewer",
    GINA_KEY: "globex/gina",
    OPS_KEY: "ops/ops:operator",
    OLGA_KEY: "acme/olga:org_admin",
}
"""The identities every served test can act as (`RECOLLECT_API_KEYS`)."""


def client_for(url: str, key: str | None) -> SyncLangGraphClient:
    """An SDK client that authenticates with `key` (None: sends no credentials)."""
    headers = {"Authorization": f"Bearer {key}"} if key else None
    return get_sync_client(url=url, api_key=None, headers=headers)


def free_port() -> int:
    """A port nothing listens on right now (the OS picks it)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def project_config_in(directory: Path) -> Path:
    """The project's `langgraph.json` written into `directory` with every code path made
    absolute, so a server started there (`cwd=directory`) serves the project's graphs but
    reads `directory`'s own `.env` and keeps its runtime there."""
    config = json.loads((PROJECT_ROOT / "langgraph.json").read_text())

    def absolute(spec: str) -> str:
        return str((PROJECT_ROOT / spec).resolve()) if spec.startswith(".") else spec

    config["dependencies"] = [absolute(dep) for dep in config.get("dependencies", [])]
    for spec in config["graphs"].values():
        spec["path"] = absolute(spec["path"])
    for section in ("checkpointer", "auth", "store"):
        if section in config:
            config[section]["path"] = absolute(config[section]["path"])
    if "app" in config.get("http", {}):
        config["http"]["app"] = absolute(config["http"]["app"])
    path = directory / "langgraph.json"
    path.write_text(json.dumps(config, indent=2))
    return path


@contextmanager
def langgraph_dev(
    env: Mapping[str, str],
    log_path: Path,
    config: Path | None = None,
    jobs: int | None = None,
    cwd: Path = PROJECT_ROOT,
) -> Iterator[str]:
    """Yield the server's base URL once `/ok` answers; kill the process group on exit.
    `config` replaces the project's `langgraph.json` (the load benchmark adds a graph); `jobs`
    is how many runs the server executes at once (`langgraph dev` runs one unless told);
    `cwd` is where the server keeps its in-memory runtime between starts (`.langgraph_api/`:
    threads and runs), the project unless a caller wants a fresh one. The served app runs the
    memory worker in its lifespan unless `env` sets `RECOLLECT_SERVER_WORKER=off`."""
    port = free_port()
    command = [str(Path(sys.executable).parent / "langgraph"), "dev", "--no-browser"]
    if config is not None:
        command += ["--config", str(config)]
    if jobs is not None:
        command += ["--n-jobs-per-worker", str(jobs)]
    command += ["--no-reload", "--host", "127.0.0.1", "--port", str(port)]
    with log_path.open("w") as log:
        process = subprocess.Popen(
            command,
            cwd=cwd,
            env={
                **os.environ,
                "LANGSMITH_TRACING": "false",
                "RECOLLECT_API_KEYS": json.dumps(API_KEYS),
                **env,
            },
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_until_ready(url, process, log_path)
            yield url
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)


def _wait_until_ready(url: str, process: subprocess.Popen[bytes], log_path: Path) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"langgraph dev exited early:\n{log_path.read_text()[-4000:]}")
        try:
            with urllib.request.urlopen(f"{url}/ok", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"langgraph dev did not start:\n{log_path.read_text()[-4000:]}")


def status_of(call: Callable[[], Any]) -> int:
    """The HTTP status a refused SDK call answered with (a call that succeeds fails the test)."""
    try:
        call()
    except (APIStatusError, httpx.HTTPStatusError) as exc:
        return exc.response.status_code
    raise AssertionError("the call succeeded")
