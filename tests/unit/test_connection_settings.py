"""Connection settings read from the environment: prepared statements and pool sizes, each
refused with one line naming its variable when it cannot be used."""

from __future__ import annotations

from collections.abc import Callable

import psycopg
import pytest

from recollect.store.budget import async_pool_size, pool_size
from recollect.store.errors import ConfigurationError
from recollect.store.server import CONNECTION_KWARGS, connection_kwargs, prepare_explicitly


@pytest.mark.parametrize(
    ("value", "threshold", "explicit"),
    [(None, 0, True), ("on", 0, True), ("OFF", None, None), (" off ", None, None)],
)
def test_prepared_statements_on_by_default_and_off_for_poolers_that_cannot_keep_them(
    monkeypatch: pytest.MonkeyPatch, value: str | None, threshold: int | None, explicit: bool | None
) -> None:
    if value is None:
        monkeypatch.delenv("RECOLLECT_PREPARED_STATEMENTS", raising=False)
    else:
        monkeypatch.setenv("RECOLLECT_PREPARED_STATEMENTS", value)
    assert connection_kwargs()["prepare_threshold"] == threshold
    assert prepare_explicitly() is explicit


def test_the_shared_connection_settings_follow_a_change_made_after_import(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RECOLLECT_PREPARED_STATEMENTS", "on")
    assert dict(CONNECTION_KWARGS)["prepare_threshold"] == 0
    monkeypatch.setenv("RECOLLECT_PREPARED_STATEMENTS", "off")
    assert {**CONNECTION_KWARGS}["prepare_threshold"] is None
    assert dict(CONNECTION_KWARGS) == connection_kwargs()


def test_an_unknown_prepared_statements_value_is_refused_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RECOLLECT_PREPARED_STATEMENTS", "sometimes")
    with pytest.raises(ConfigurationError) as refused:
        psycopg.connect("host=/nowhere", **CONNECTION_KWARGS)
    assert str(refused.value) == (
        "RECOLLECT_PREPARED_STATEMENTS must be on or off, got 'sometimes'"
    )


@pytest.mark.parametrize(
    ("variable", "read", "default"),
    [("RECOLLECT_POOL_SIZE", pool_size, 4), ("RECOLLECT_ASYNC_POOL_SIZE", async_pool_size, 8)],
)
def test_pool_sizes_default_to_a_twelve_connection_budget_and_refuse_nonsense(
    monkeypatch: pytest.MonkeyPatch, variable: str, read: Callable[[], int], default: int
) -> None:
    monkeypatch.delenv(variable, raising=False)
    assert read() == default
    monkeypatch.setenv(variable, "2")
    assert read() == 2
    for bad, says in (("lots", "a whole number, got 'lots'"), ("0", "at least 1, got 0")):
        monkeypatch.setenv(variable, bad)
        with pytest.raises(ConfigurationError, match=f"^{variable} must be {says}$"):
            read()
