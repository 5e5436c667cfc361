"""Drive the `recollect` command as a user would: a real subprocess over pipes."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Mapping


def recollect_command(*args: str) -> list[str]:
    """The CLI as installed in this environment."""
    return [sys.executable, "-m", "recollect.cli.main", *args]


def run_recollect(
    *args: str, env: Mapping[str, str], stdin: str = "", timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run one command to completion."""
    return subprocess.run(
        recollect_command(*args),
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=timeout,
        check=False,
    )


class Interactive:
    """A long-running CLI process whose output lines are read with a deadline."""

    def __init__(self, *args: str, env: Mapping[str, str]) -> None:
        self.process = subprocess.Popen(
            recollect_command(*args),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, **env},
        )
        self._lines: queue.Queue[str] = queue.Queue()
        self.transcript: list[str] = []
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line.rstrip("\n"))

    def send(self, text: str) -> None:
        """Type a line."""
        assert self.process.stdin is not None
        self.process.stdin.write(text + "\n")
        self.process.stdin.flush()

    def expect(self, prefix: str, timeout: float = 60) -> str:
        """Wait for the next line that starts with `prefix`; fail with the transcript if none."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(
                    f"no line starting {prefix!r}; got:\n" + "\n".join(self.transcript)
                )
            try:
                line = self._lines.get(timeout=remaining)
            except queue.Empty:
                continue
            self.transcript.append(line)
            if line.startswith(prefix):
                return line

    def kill(self) -> None:
        """SIGKILL: no cleanup code runs, as in a crash."""
        self.process.kill()
        self.process.wait(timeout=10)

    def close(self) -> int:
        """Close stdin (EOF ends the REPL) and wait."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        return self.process.wait(timeout=60)
