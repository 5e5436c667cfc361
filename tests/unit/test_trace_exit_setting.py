"""`RECOLLECT_TRACE_EXIT_TIMEOUT_S`: how long exit waits for traces, read with one-line refusals."""

from __future__ import annotations

import pytest

from recollect.store.errors import ConfigurationError
from recollect.trace.settings import DEFAULT_EXIT_TIMEOUT_S, EXIT_TIMEOUT_ENV, exit_timeout_s


def test_the_exit_deadline_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(EXIT_TIMEOUT_ENV, raising=False)
    assert exit_timeout_s() == DEFAULT_EXIT_TIMEOUT_S
    monkeypatch.setenv(EXIT_TIMEOUT_ENV, "0.5")
    assert exit_timeout_s() == 0.5
    for bad in ("soon", "-1", "nan"):
        monkeypatch.setenv(EXIT_TIMEOUT_ENV, bad)
        with pytest.raises(ConfigurationError, match=EXIT_TIMEOUT_ENV):
            exit_timeout_s()
