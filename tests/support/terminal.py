"""Drive the `recollect` command through a pseudo-terminal, as a person at a keyboard would.

Over a pty the chat sees a terminal (it prints its `you>` prompt), and everything it writes —
stdout, stderr, a background thread's stray output — arrives on one screen, in order.
"""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import time
from collections.abc import Mapping

from tests.support.processes import recollect_command

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class Terminal:
    """One process on a fresh pseudo-terminal; `screen` is everything it has shown so far."""

    def __init__(self, *args: str, env: Mapping[str, str], cwd: str | None = None) -> None:
        self._master, follower = pty.openpty()
        self.process = subprocess.Popen(
            recollect_command(*args),
            stdin=follower,
            stdout=follower,
            stderr=follower,
            env=dict(env),
            cwd=cwd,
            close_fds=True,
        )
        os.close(follower)
        self.screen = ""
        self._cursor = 0
        """How far `wait_for` and `quiet_for` have looked; reads may run ahead of it."""

    def _read(self, timeout: float) -> str:
        ready, _, _ = select.select([self._master], [], [], max(0.0, timeout))
        if not ready:
            return ""
        try:
            chunk = os.read(self._master, 65536)
        except OSError:  # the process ended and the terminal closed
            return ""
        text = _ANSI.sub("", chunk.decode("utf-8", errors="replace")).replace("\r\n", "\n")
        self.screen += text
        return text

    def wait_for(self, needle: str, timeout: float = 120) -> str:
        """Read until `needle` shows after the cursor; the text up to and including it."""
        start = self._cursor
        deadline = time.monotonic() + timeout
        while (found := self.screen.find(needle, start)) < 0:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or (not self._read(remaining) and self.process.poll() is not None):
                raise AssertionError(f"{needle!r} never showed; the screen:\n{self.screen}")
        self._cursor = found + len(needle)
        return self.screen[start : self._cursor]

    def quiet_for(self, seconds: float) -> str:
        """Whatever shows after the cursor while nobody types for `seconds` (should be
        nothing)."""
        deadline = time.monotonic() + seconds
        while (remaining := deadline - time.monotonic()) > 0:
            self._read(remaining)
        start, self._cursor = self._cursor, len(self.screen)
        return self.screen[start:]

    def type(self, line: str) -> None:
        """Type a line and press Enter."""
        os.write(self._master, (line + "\n").encode())

    def close(self, timeout: float = 120) -> int:
        """Wait for the process to end (after `/exit`), then release the terminal."""
        deadline = time.monotonic() + timeout
        while self.process.poll() is None and time.monotonic() < deadline:
            self._read(0.2)
        code = self.process.wait(timeout=max(1.0, deadline - time.monotonic()))
        while self._read(0.05):
            pass
        os.close(self._master)
        return code
